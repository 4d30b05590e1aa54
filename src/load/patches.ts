/**
 * An environment's overlay patches (docs/user/environments.md), after Kustomize's patches:
 * each patch document names a resource by `kind` and `metadata.name` and
 *
 * - is merged into it with RFC 7386 JSON merge patch semantics (what Kustomize applies to a
 *   resource through a JSON merge patch, and its strategic merge patch does for maps): a map
 *   merges key by key, `null` removes the key, a list or a scalar replaces what was there;
 * - with `$patch: delete` at its top, leaves the resource out of the environment (Kustomize's
 *   strategic-merge directive); a map `{ $patch: delete }` inside a patch removes that key;
 * - naming no resource of the repository, is added to it whole (then it must be a complete
 *   resource, checked like any other; only a patch file can add one).
 *
 * Patches apply in the order gatesync.yaml lists them, documents in file order.
 */
import type { PathSegment } from "../field-path.js";

/** A patch as gatesync.yaml names it (config/environment-section.ts's PatchSource). */
export type PatchOrigin =
  | { readonly type: "file"; readonly file: string; readonly written: string; readonly at: string }
  | { readonly type: "inline"; readonly document: Readonly<Record<string, unknown>>; readonly at: string };

/** One patch document, ready to apply (plain data: it crosses to worker threads). */
export interface PatchDocument {
  /** `Kind/name`. */
  readonly target: string;
  readonly delete: boolean;
  /** The document without its `$patch` directive. */
  readonly body: Readonly<Record<string, unknown>>;
  /** The patch file (absolute) and the document's index in it; absent for an inline patch. */
  readonly file?: string;
  readonly index?: number;
  /** Where gatesync.yaml names the patch (`environments.staging.patches[0]`). */
  readonly at: string;
}

const isMap = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

const define = (o: Record<string, unknown>, k: string, value: unknown): void => {
  // defined, not assigned: a `__proto__` key stays a key
  Object.defineProperty(o, k, { value, enumerable: true, writable: true, configurable: true });
};

/** RFC 7386: `patch` merged into `target` (neither is changed). */
export function mergePatch(target: unknown, patch: unknown): unknown {
  if (!isMap(patch)) return patch;
  const result: Record<string, unknown> = isMap(target) ? { ...target } : {};
  for (const [k, v] of Object.entries(patch)) {
    if (k === "$patch") continue;
    if (v === null || (isMap(v) && v.$patch === "delete")) delete result[k];
    else define(result, k, mergePatch(result[k], v));
  }
  return result;
}

/** `Kind/name` of a document, when it names both. */
export function targetOf(value: unknown): string | undefined {
  if (!isMap(value) || typeof value.kind !== "string" || !isMap(value.metadata) || typeof value.metadata.name !== "string") return undefined;
  return `${value.kind}/${value.metadata.name}`;
}

/** A patch document from a parsed one; undefined (with why) when it names no resource. */
export function patchDocument(
  value: unknown,
  at: string,
  file?: { readonly file: string; readonly index: number },
): PatchDocument | { readonly problem: string; readonly path: PathSegment[] } {
  const target = targetOf(value);
  if (target === undefined || !isMap(value)) return { problem: "a patch document names its resource with `kind` and `metadata.name`", path: [] };
  if (value.$patch !== undefined && value.$patch !== "delete" && value.$patch !== "merge") {
    return { problem: `\`$patch: ${JSON.stringify(value.$patch)}\` is not a directive gatesync knows: \`delete\` or \`merge\``, path: ["$patch"] };
  }
  const { $patch, ...body } = value;
  return { target, delete: $patch === "delete", body, at, ...(file === undefined ? {} : { file: file.file, index: file.index }) };
}

/**
 * A document with the patches that name it applied: undefined when one leaves it out, the
 * same object when none names it. `applied` collects the targets matched.
 */
export function applyPatches(value: unknown, patches: readonly PatchDocument[], applied: Set<string>): unknown {
  const target = targetOf(value);
  if (target === undefined) return value;
  let out = value;
  for (const p of patches) {
    if (p.target !== target) continue;
    applied.add(target);
    if (p.delete) return undefined;
    out = mergePatch(out, p.body);
  }
  return out;
}
