/**
 * An environment's overlay patches read and checked (load/patches.ts says what they do): patch
 * files parsed, each document naming its resource, the environment's values put in; every
 * problem a located PATCH_INVALID (or VALUE_MISSING) finding in the patch file (gatesync.yaml for
 * an inline patch) naming the environment.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import { ErrorCode } from "../../errors.js";
import type { Diagnostic } from "../../errors.js";
import { formatPath } from "../../text/field-path.js";
import { toPosix } from "../../file-paths.js";
import type { SourceFile } from "../../load/list-files.js";
import { patchDocument, patchMembers } from "../../load/patches.js";
import type { PatchDocument, PatchOrigin, PatchPlace } from "../../load/patches.js";
import type { PathSegment } from "../../text/field-path.js";
import { distance } from "fastest-levenshtein";
import { similar } from "../../text/similar.js";
import { readResourceFile, readTextSync } from "../../load/read-file.js";
import type { Limits } from "../../load/read-file.js";
import type { ValuesContext } from "../../load/values.js";
import { locateWith } from "../findings.js";
import { applyValues, missingValueHint } from "./value-check.js";
import { substituteValues } from "../../load/values.js";

export interface LoadedPatches {
  readonly patches: readonly PatchDocument[];
  readonly diagnostics: readonly Diagnostic[];
}

/** Where gatesync.yaml lies and how findings name it (relative to the resource root): inline patches are located there. */
export interface ConfigFile {
  readonly absolute: string;
  readonly path: string;
}

async function patchFile(absolute: string, root: string): Promise<SourceFile | undefined> {
  try {
    const s = await stat(absolute);
    return s.isFile() ? { path: toPosix(path.relative(root, absolute)), absolute, size: s.size, mtimeMs: s.mtimeMs } : undefined;
  } catch {
    return undefined;
  }
}

/** Where each member of a patch document is: `base` is the document's own path in its file (an inline patch's in gatesync.yaml). */
function placeOf(value: unknown, file: string, environment: string, at: (path: PathSegment[]) => { line?: number; column?: number }): PatchPlace {
  const positions: Array<readonly [string, number, number]> = [];
  for (const member of patchMembers(value)) {
    const p = at(member);
    if (p.line !== undefined) positions.push([formatPath(member), p.line, p.column ?? 1]);
  }
  return { file, environment, positions };
}

/** `environments.NAME.patches[I]` (environment-section.ts's `at`) as path segments. */
function inlinePath(at: string): PathSegment[] {
  const m = /^environments\.([a-z][a-z0-9-]*)\.patches\[(\d+)\]$/.exec(at);
  return m === null ? [] : ["environments", m[1]!, "patches", Number(m[2])];
}

function inlinePatch(origin: Extract<PatchOrigin, { type: "inline" }>, values: ValuesContext, config: ConfigFile | undefined, out: Patches): void {
  const text = config === undefined ? undefined : readTextSync(config.absolute, config.path);
  const file = config?.path ?? "gatesync.yaml";
  const locate = locateWith(text === undefined ? new Map<string, string>() : new Map([[file, text]]));
  const base = inlinePath(origin.at);
  const where = (p: readonly PathSegment[]): { file?: string; line?: number; column?: number } =>
    text === undefined ? {} : { file, ...locate(file, 0, [...base, ...p]) };
  const valued = substituteValues(origin.document, values.values);
  for (const m of valued.missing) {
    out.diagnostics.push({
      severity: "error",
      code: ErrorCode.VALUE_MISSING,
      ...where(m.path),
      path: `${origin.at}.${formatPath(m.path)}`,
      message: `\${var:${m.name}} has no value in environment ${values.environment}`,
      hint: missingValueHint(values, m.name),
    });
  }
  const place = placeOf(valued.value, file, values.environment, (p) => (text === undefined ? {} : locate(file, 0, [...base, ...p])));
  const p = patchDocument(valued.value, origin.at, place);
  if (!("problem" in p)) out.patches.push(p);
  else
    out.diagnostics.push({
      severity: "error",
      code: ErrorCode.PATCH_INVALID,
      ...where([]),
      path: origin.at,
      message: `environment ${values.environment}: ${p.problem}`,
    });
}

interface Patches {
  readonly patches: PatchDocument[];
  readonly diagnostics: Diagnostic[];
}

async function filePatches(origin: Extract<PatchOrigin, { type: "file" }>, root: string, limits: Limits, values: ValuesContext, out: Patches): Promise<void> {
  const file = await patchFile(origin.file, root);
  if (file === undefined) {
    out.diagnostics.push({
      severity: "error",
      code: ErrorCode.PATCH_INVALID,
      path: origin.at,
      message: `patch file ${origin.written} does not exist`,
      hint: "patch files are named relative to gatesync.yaml",
    });
    return;
  }
  const read = await readResourceFile(file, limits);
  out.diagnostics.push(...read.diagnostics);
  const locate = locateWith(read.text === undefined ? new Map<string, string>() : new Map([[file.path, read.text]]));
  const valued = applyValues(read.documents, values, file.path, (f, i, p) => locate(f, i, p));
  out.diagnostics.push(...valued.findings);
  for (const doc of valued.documents) {
    const place = placeOf(doc.value, file.path, values.environment, (p) => locate(file.path, doc.index, p));
    const p = patchDocument(doc.value, origin.at, place);
    if (!("problem" in p)) out.patches.push(p);
    else {
      out.diagnostics.push({
        severity: "error",
        code: ErrorCode.PATCH_INVALID,
        file: file.path,
        ...locate(file.path, doc.index, p.path),
        path: formatPath(p.path),
        message: `environment ${values.environment}: ${p.problem}`,
      });
    }
  }
}

/** An environment's patches, in gatesync.yaml's order; `config`: gatesync.yaml, where inline patches are written. */
export async function loadPatches(
  origins: readonly PatchOrigin[],
  root: string,
  limits: Limits,
  values: ValuesContext,
  config: ConfigFile | undefined,
): Promise<LoadedPatches> {
  const out: Patches = { patches: [], diagnostics: [] };
  for (const origin of origins) {
    if (origin.type === "inline") inlinePatch(origin, values, config, out);
    else await filePatches(origin, root, limits, values, out);
  }
  return out;
}

/** `Kind/name` of every resource the repository has, for a did-you-mean. */
function resourcesOf(verdicts: Iterable<{ readonly documents: readonly { readonly kind?: string; readonly name?: string }[] }>): string[] {
  const out = new Set<string>();
  for (const v of verdicts) for (const d of v.documents) if (d.kind !== undefined && d.name !== undefined) out.add(`${d.kind}/${d.name}`);
  return [...out].sort();
}

/**
 * The resource a patch most likely meant: of its kind, a similar name — first one holding the
 * other (a rename that kept the old name in the new: `orders` → `orders-v2`), then the nearest.
 */
function nearest(target: string, resources: readonly string[]): string | undefined {
  const slash = target.indexOf("/");
  const kind = target.slice(0, slash + 1);
  const name = target.slice(slash + 1);
  const rank = (r: string): number => {
    const other = r.slice(kind.length);
    return (other.includes(name) || name.includes(other) ? 0 : 1000) + distance(other, name);
  };
  const near = resources.filter((r) => r.startsWith(kind) && similar(r.slice(kind.length), name));
  return near.sort((a, b) => rank(a) - rank(b))[0];
}

/**
 * The patches that named no resource of the repository (`verdicts` say which were matched, and
 * what the repository has): each a PATCH_INVALID error located in its patch, naming the
 * environment — a patch never adds a resource.
 */
export function unmatchedPatches(
  loaded: LoadedPatches,
  verdicts: Iterable<{ readonly patchesApplied?: readonly string[]; readonly documents: readonly { readonly kind?: string; readonly name?: string }[] }>,
): Diagnostic[] {
  const all = [...verdicts];
  const matched = new Set<string>();
  for (const v of all) for (const t of v.patchesApplied ?? []) matched.add(t);
  const unmatched = loaded.patches.filter((p) => !matched.has(p.target));
  if (unmatched.length === 0) return [];
  const resources = resourcesOf(all);
  return unmatched.map((p) => {
    const near = nearest(p.target, resources);
    const [, line, column] = p.place.positions.find(([at]) => at === "") ?? [];
    return {
      severity: "error",
      code: ErrorCode.PATCH_INVALID,
      file: p.place.file,
      ...(line === undefined ? { path: p.at } : { line, column }),
      resource: p.target,
      message:
        `environment ${p.place.environment}: the patch ${p.delete ? "leaving out" : "of"} ${p.target} names no resource of the repository; ` +
        "to add one, write it whole in a resource file (a patch only changes or leaves out a resource the repository has)",
      hint:
        near === undefined ? "check the patch's `kind` and `metadata.name`" : `did you mean ${near}? (a patch follows no rename: rename it in the patch too)`,
    };
  });
}
