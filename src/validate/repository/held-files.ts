/**
 * A repository held in memory (ValidateOptions.held): the files its writer is about to write,
 * listed as the resource directory's listing would list them, none read from disk.
 */
import path from "node:path";
import type { SourceFile } from "../../load/list-files.js";
import type { HeldFile } from "../../load/read-file.js";

/** Paths relative to the resource directory (posix) → the file's text and documents. */
export type HeldFiles = ReadonlyMap<string, HeldFile>;

/** The held files as a listing: sorted by path, the resource directory as both root and boundary unless told. */
export function heldListing(
  root: string,
  boundary: string | undefined,
  held: HeldFiles,
): { root: string; boundary: string; files: SourceFile[]; diagnostics: [] } {
  const abs = path.resolve(root);
  const files = [...held]
    .sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))
    .map(([p, file]) => ({ path: p, absolute: path.join(abs, p), size: Buffer.byteLength(file.text), mtimeMs: 0, held: file }));
  return { root: abs, boundary: path.resolve(boundary ?? abs), files, diagnostics: [] };
}
