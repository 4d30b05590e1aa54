/**
 * An environment's overlay patches read and checked (load/patches.ts says what they do): patch
 * files parsed, each document naming its resource, the environment's values put in; every
 * problem a located PATCH_INVALID (or VALUE_MISSING) finding in the patch file.
 */
import { stat } from "node:fs/promises";
import path from "node:path";
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { formatPath } from "../field-path.js";
import { toPosix } from "../file-paths.js";
import type { SourceFile } from "../load/list-files.js";
import { patchDocument } from "../load/patches.js";
import type { PatchDocument, PatchOrigin } from "../load/patches.js";
import { readResourceFile, readTextSync } from "../load/read-file.js";
import type { Limits } from "../load/read-file.js";
import type { ValuesContext } from "../load/values.js";
import { locateWith } from "./findings.js";
import { applyValues, missingValueHint } from "./value-check.js";
import { substituteValues } from "../load/values.js";

export interface LoadedPatches {
  readonly patches: readonly PatchDocument[];
  readonly diagnostics: readonly Diagnostic[];
  /** Each patch file as a source file (named relative to the resource root), by absolute path. */
  readonly files: ReadonlyMap<string, SourceFile>;
}

async function patchFile(absolute: string, root: string): Promise<SourceFile | undefined> {
  try {
    const s = await stat(absolute);
    return s.isFile() ? { path: toPosix(path.relative(root, absolute)), absolute, size: s.size, mtimeMs: s.mtimeMs } : undefined;
  } catch {
    return undefined;
  }
}

export async function loadPatches(origins: readonly PatchOrigin[], root: string, limits: Limits, values: ValuesContext | undefined): Promise<LoadedPatches> {
  const patches: PatchDocument[] = [];
  const diagnostics: Diagnostic[] = [];
  const files = new Map<string, SourceFile>();
  for (const origin of origins) {
    if (origin.type === "inline") {
      const valued = values === undefined ? undefined : substituteValues(origin.document, values.values);
      for (const m of valued?.missing ?? []) {
        diagnostics.push({
          severity: "error",
          code: ErrorCode.VALUE_MISSING,
          path: `${origin.at}.${formatPath(m.path)}`,
          message: `\${var:${m.name}} has no value in environment ${values!.environment}`,
          hint: missingValueHint(values!, m.name),
        });
      }
      const p = patchDocument(valued?.value ?? origin.document, origin.at);
      if ("problem" in p) diagnostics.push({ severity: "error", code: ErrorCode.PATCH_INVALID, path: origin.at, message: p.problem });
      else patches.push(p);
      continue;
    }
    const file = await patchFile(origin.file, root);
    if (file === undefined) {
      diagnostics.push({
        severity: "error",
        code: ErrorCode.PATCH_INVALID,
        path: origin.at,
        message: `patch file ${origin.written} does not exist`,
        hint: "patch files are named relative to gatesync.yaml",
      });
      continue;
    }
    files.set(file.absolute, file);
    const read = await readResourceFile(file, limits);
    diagnostics.push(...read.diagnostics);
    const locate = locateWith(read.text === undefined ? new Map<string, string>() : new Map([[file.path, read.text]]));
    const valued = values === undefined ? undefined : applyValues(read.documents, values, file.path, (f, i, p) => locate(f, i, p));
    diagnostics.push(...(valued?.findings ?? []));
    for (const doc of valued?.documents ?? read.documents) {
      const p = patchDocument(doc.value, origin.at, { file: file.absolute, index: doc.index });
      if ("problem" in p) {
        diagnostics.push({
          severity: "error",
          code: ErrorCode.PATCH_INVALID,
          file: file.path,
          ...locate(file.path, doc.index, p.path),
          path: formatPath(p.path),
          message: p.problem,
        });
      } else patches.push(p);
    }
  }
  return { patches, diagnostics, files };
}

/**
 * The patches that named no resource of the repository (`verdicts` say which were matched): a
 * delete, or an inline patch, is a PATCH_INVALID error; a document of a patch file adds a
 * resource — `added` maps each patch file (absolute) to the indexes of the documents it adds.
 */
export function unmatchedPatches(
  loaded: LoadedPatches,
  verdicts: Iterable<{ readonly patchesApplied?: readonly string[] }>,
): { readonly diagnostics: Diagnostic[]; readonly added: Map<string, Set<number>> } {
  const matched = new Set<string>();
  for (const v of verdicts) for (const t of v.patchesApplied ?? []) matched.add(t);
  const diagnostics: Diagnostic[] = [];
  const added = new Map<string, Set<number>>();
  for (const p of loaded.patches) {
    if (matched.has(p.target)) continue;
    const file = p.file === undefined ? undefined : loaded.files.get(p.file);
    if (file !== undefined && !p.delete) {
      added.set(file.absolute, (added.get(file.absolute) ?? new Set()).add(p.index!));
      continue;
    }
    const where = file === undefined ? { path: p.at } : { file: file.path, ...locateDocument(file, p.index!) };
    diagnostics.push({
      severity: "error",
      code: ErrorCode.PATCH_INVALID,
      ...where,
      resource: p.target,
      message: p.delete
        ? `the patch leaves out ${p.target}, which the repository does not have`
        : `the inline patch names ${p.target}, which the repository does not have`,
      hint: p.delete
        ? "check its kind and name (`gatesync validate` lists the resources)"
        : "add a resource with a patch file: an inline patch only changes or leaves out",
    });
  }
  return { diagnostics, added };
}

function locateDocument(file: SourceFile, index: number): { line?: number; column?: number } {
  const text = readTextSync(file.absolute, file.path);
  return text === undefined ? {} : locateWith(new Map([[file.path, text]]))(file.path, index, []);
}
