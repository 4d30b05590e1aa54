/**
 * An environment's overlay patches (docs/user/environments.md), after Kustomize's patches:
 * each patch document names a resource by `kind` and `metadata.name` and
 *
 * - is merged into it with RFC 7386 JSON merge patch semantics (what Kustomize applies to a
 *   resource through a JSON merge patch, and its strategic merge patch does for maps): a map
 *   merges key by key, `null` removes the key, a list or a scalar replaces what was there;
 * - with `$patch: delete` at its top, leaves the resource out of the environment (Kustomize's
 *   strategic-merge directive); a map `{ $patch: delete }` inside a patch removes that key;
 * - naming no resource of the repository, is an error (PATCH_INVALID): a patch changes or
 *   leaves out what the repository has, and a resource is added by a resource file — a patch
 *   left naming a renamed resource would otherwise become a second, incomplete resource.
 *
 * Patches apply in the order gatesync.yaml lists them, documents in file order.
 */
import { formatPath } from "../text/field-path.js";
import type { PathSegment } from "../text/field-path.js";

/** A patch as gatesync.yaml names it (config/environment-section.ts's PatchSource). */
export type PatchOrigin =
  | { readonly type: "file"; readonly file: string; readonly written: string; readonly at: string }
  | { readonly type: "inline"; readonly document: Readonly<Record<string, unknown>>; readonly at: string };

/**
 * Where a patch document is written, for the findings about what it sets: the file (the patch
 * file, or gatesync.yaml for an inline patch; named relative to the resource root, as findings
 * name files) and the line and column of each of its members by their display path (`spec.rate`;
 * `""` the document itself). Positions, not the file's text: a patch is small, and its
 * positions are part of what a file's kept verdict depends on.
 */
export interface PatchPlace {
  readonly file: string;
  readonly environment: string;
  /** `[display path, line, column]`: a list, not an object keyed by paths a commit writes (`__proto__`). */
  readonly positions: ReadonlyArray<readonly [path: string, line: number, column: number]>;
}

/** One patch document, ready to apply (plain data: it crosses to worker threads). */
export interface PatchDocument {
  /** `Kind/name`. */
  readonly target: string;
  readonly delete: boolean;
  /** The document without its `$patch` directive. */
  readonly body: Readonly<Record<string, unknown>>;
  /** Where gatesync.yaml names the patch (`environments.staging.patches[0]`). */
  readonly at: string;
  readonly place: PatchPlace;
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
export function patchDocument(value: unknown, at: string, place: PatchPlace): PatchDocument | { readonly problem: string; readonly path: PathSegment[] } {
  const target = targetOf(value);
  if (target === undefined || !isMap(value)) return { problem: "a patch document names its resource with `kind` and `metadata.name`", path: [] };
  if (value.$patch !== undefined && value.$patch !== "delete" && value.$patch !== "merge") {
    return { problem: `\`$patch: ${JSON.stringify(value.$patch)}\` is not a directive gatesync knows: \`delete\` or \`merge\``, path: ["$patch"] };
  }
  const { $patch, ...body } = value;
  return { target, delete: $patch === "delete", body, at, place };
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

/** The path of every member of a patch document, the document itself (`[]`) first. */
export function patchMembers(value: unknown, at: PathSegment[] = []): PathSegment[][] {
  const out: PathSegment[][] = [at];
  if (Array.isArray(value)) value.forEach((v, i) => out.push(...patchMembers(v, [...at, i])));
  else if (isMap(value)) for (const [k, v] of Object.entries(value)) out.push(...patchMembers(v, [...at, k]));
  return out;
}

const within = (target: string, at: string): boolean => target === at || target.startsWith(`${at}.`) || target.startsWith(`${at}[`);

/**
 * Whether the patch set what a finding at `target` (a display path, `spec.rate`) is about: the
 * display path of the member it wrote whole on the way — a scalar, a list, a removal, or a map
 * the document had nothing at (`before`: the document the patch was merged into) — or of the
 * map the finding is on when the patch removed one of that map's members (a required field
 * removed); undefined when the finding is about what the resource itself says.
 */
export function patchedAt(body: unknown, target: string, before: unknown, at: PathSegment[] = []): string | undefined {
  const here = formatPath(at);
  if (here !== "" && !within(target, here)) return undefined;
  if (!isMap(body) || (here !== "" && !isMap(before))) return here === "" ? undefined : here;
  for (const [k, v] of Object.entries(body)) {
    if (k === "$patch") continue;
    const found = patchedAt(v, target, Object.hasOwn(before as object, k) ? (before as Record<string, unknown>)[k] : undefined, [...at, k]);
    if (found !== undefined) return found;
  }
  const removes = Object.values(body).some((v) => v === null || (isMap(v) && v.$patch === "delete"));
  return here === target && removes ? here : undefined;
}

/** The deepest written position at or below `at` on the way to `target` (a place's `positions`). */
export function positionOf(positions: PatchPlace["positions"], at: string, target: string): readonly [number, number] | undefined {
  let best: PatchPlace["positions"][number] | undefined;
  for (const p of positions) if (within(p[0], at) && within(target, p[0]) && (best === undefined || p[0].length > best[0].length)) best = p;
  return best === undefined ? undefined : [best[1], best[2]];
}
