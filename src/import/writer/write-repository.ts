/**
 * Writing what an import made: every file first into a temporary directory beside the target
 * (same file system), then moved into place — a new repository by one rename of the directory,
 * a `--merge` file by file (each a rename), only the files the import writes. A failure before
 * the moves leaves the target as it was.
 */
import { existsSync, mkdirSync, writeFileSync } from "node:fs";
import { mkdir, mkdtemp, readFile, readdir, rename, rm, rmdir } from "node:fs/promises";
import path from "node:path";
import { isInside } from "../../file-paths.js";

/** Path relative to the repository (posix) → content. */
export type FileSet = ReadonlyMap<string, string>;

export interface WriteOutcome {
  readonly written: string[];
  readonly unchanged: string[];
}

/** A file set's paths are relative and stay inside the repository (they come from names import made, but checked again here). */
function checkedPath(root: string, rel: string): string {
  const abs = path.resolve(root, rel);
  if (path.isAbsolute(rel) || !isInside(abs, root) || abs === root) throw new Error(`refusing to write ${JSON.stringify(rel)}: outside the repository`);
  return abs;
}

export async function stageFiles(files: FileSet, near: string): Promise<string> {
  await mkdir(path.dirname(near), { recursive: true });
  const temp = await mkdtemp(path.join(path.dirname(near), ".gatesync-import-"));
  try {
    const entries = [...files].map(([rel, text]) => ({ abs: checkedPath(temp, rel), text }));
    // written one after the other, synchronously: a one-shot command with nothing else to do — through the
    // thread pool, 12,500 small files cost more in system time (its threads' hand-offs) than the writes themselves
    for (const dir of new Set(entries.map((e) => path.dirname(e.abs)))) mkdirSync(dir, { recursive: true });
    for (const e of entries) writeFileSync(e.abs, e.text, { flag: "wx" });
    return temp;
  } catch (err) {
    await rm(temp, { recursive: true, force: true });
    throw err;
  }
}

/** A new repository: the staged directory renamed to the target (which may exist only empty). */
export async function moveNew(temp: string, target: string, files: FileSet): Promise<WriteOutcome> {
  if (existsSync(target)) {
    if ((await readdir(target)).length > 0) throw new Error("the target directory is not empty");
    await rmdir(target);
  }
  await rename(temp, target);
  return { written: [...files.keys()].sort(), unchanged: [] };
}

/** `--merge`: each staged file renamed over its place in the repository; a file already holding the same bytes is left. */
export async function moveMerged(temp: string, target: string, files: FileSet): Promise<WriteOutcome> {
  const written: string[] = [];
  const unchanged: string[] = [];
  try {
    for (const rel of [...files.keys()].sort()) {
      const to = checkedPath(target, rel);
      const current = existsSync(to) ? await readFile(to, "utf8") : undefined;
      if (current === files.get(rel)) {
        unchanged.push(rel);
        continue;
      }
      await mkdir(path.dirname(to), { recursive: true });
      await rename(checkedPath(temp, rel), to);
      written.push(rel);
    }
  } finally {
    await rm(temp, { recursive: true, force: true });
  }
  return { written, unchanged };
}
