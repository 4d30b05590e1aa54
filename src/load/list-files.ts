/**
 * Lists the resource files under a root directory: `.yaml`, `.yml` and `.json`, skipping
 * hidden files and directories. Symbolic links are followed only while they stay inside the
 * boundary (the repository); one that leaves it is an error, and loops are cut.
 *
 * The file system is asked synchronously: a call per directory and per file, each far cheaper
 * than the thread-pool round trip of its asynchronous twin (a webhook's run lists the repository
 * again each time: docs/dev/performance.md, "Push to applied"); the loop is let go every
 * `entriesPerTurn` directory entries (loop-turns.ts), one huge directory included.
 */
import { lstatSync, readdirSync, realpathSync, statSync } from "node:fs";
import path from "node:path";
import { ErrorCode, LoadError } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { isInside, toPosix } from "../file-paths.js";
import type { HeldFile } from "./read-file.js";
import { LoopTurns } from "./loop-turns.js";

export const resourceExtensions = [".yaml", ".yml", ".json"] as const;

/** Directory entries looked at before the loop is let go once. */
const entriesPerTurn = 1024;

export interface SourceFile {
  /** Path relative to the root, with `/` separators. */
  readonly path: string;
  readonly absolute: string;
  readonly size: number;
  /** Modification time: with the size, tells an unchanged file. */
  readonly mtimeMs: number;
  /** Held in memory, not on disk (read-file.ts HeldFile). */
  readonly held?: HeldFile;
}

export interface ListOptions {
  /** Directory the resources live in. */
  readonly root: string;
  /** Nothing outside it may be read (the repository); defaults to the root. */
  readonly boundary?: string;
  readonly maxFiles: number;
  /** Told the count of files found so far after each directory: work can start before the list is complete. */
  readonly onProgress?: (files: number) => void;
}

/**
 * The real path of the resource directory, or a clear error when there is none: a missing or
 * mistyped directory is the user's to fix, not an internal failure.
 */
function resourceDirectory(dir: string): string {
  let real: string;
  try {
    real = realpathSync.native(dir);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    throw new LoadError(
      ErrorCode.FILE_READ,
      `the resource directory ${dir} ${code === "ENOENT" ? "does not exist" : `cannot be read (${code ?? String(err)})`}`,
      {
        hint: "give the directory that holds the resource files: `validate DIR`, `plan --dir DIR`, or source.directory in gatesync.yaml (relative to that file)",
        cause: err,
      },
    );
  }
  if (!statSync(real).isDirectory()) {
    throw new LoadError(ErrorCode.FILE_READ, `${dir} is a file, not a directory of resource files`, { hint: "give the directory that holds it" });
  }
  return real;
}

/** Where a symbolic link leads, when it leads somewhere inside the boundary (else a finding, and undefined). */
function followLink(full: string, rel: string, boundary: string, diagnostics: Diagnostic[]): { target: string; isDir: boolean; isFile: boolean } | undefined {
  let target: string;
  try {
    target = realpathSync.native(full);
  } catch {
    diagnostics.push({ severity: "warning", code: ErrorCode.FILE_READ, file: rel, message: "broken symbolic link, skipped" });
    return undefined;
  }
  if (!isInside(target, boundary)) {
    diagnostics.push({
      severity: "error",
      code: ErrorCode.PATH_ESCAPE,
      file: rel,
      message: "symbolic link points outside the repository",
      hint: "resources must live inside the repository: copy the file in, or remove the link",
    });
    return undefined;
  }
  const st = statSync(target);
  return { target, isDir: st.isDirectory(), isFile: st.isFile() };
}

/** The resource files below `opts.root`, with the real paths of the root and the boundary. */
export async function listResourceFiles(opts: ListOptions): Promise<{ root: string; boundary: string; files: SourceFile[]; diagnostics: Diagnostic[] }> {
  const root = resourceDirectory(opts.root);
  const boundary = opts.boundary === undefined ? root : realpathSync.native(opts.boundary);
  // the real path of the root itself: a link anywhere along it may not lead out of the repository
  if (!isInside(root, boundary)) {
    throw new LoadError(ErrorCode.PATH_ESCAPE, `the resource directory ${opts.root} leads outside the repository (to ${root})`, {
      hint: "a symbolic link along the path (the sub-directory itself, or a parent) points outside the checkout: nothing is read or applied from it",
    });
  }
  const files: SourceFile[] = [];
  const diagnostics: Diagnostic[] = [];
  const visited = new Set<string>([root]);
  const queue: string[] = [root];
  let tooMany = false;
  const turns = new LoopTurns(entriesPerTurn);

  while (queue.length > 0 && !tooMany) {
    const dir = queue.shift()!;
    const entries = readdirSync(dir, { withFileTypes: true }).sort((a, b) => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
    for (const entry of entries) {
      await turns.tick();
      if (entry.name.startsWith(".")) continue;
      const full = path.join(dir, entry.name);
      const rel = toPosix(path.relative(root, full));
      const found = entry.isSymbolicLink()
        ? followLink(full, rel, boundary, diagnostics)
        : { target: full, isDir: entry.isDirectory(), isFile: entry.isFile() };
      if (found === undefined) continue;
      const { target, isDir, isFile } = found;
      if (isDir) {
        if (!visited.has(target)) {
          visited.add(target);
          queue.push(target === full ? full : target);
        }
        continue;
      }
      if (!isFile || !resourceExtensions.some((ext) => entry.name.toLowerCase().endsWith(ext))) continue;
      if (files.length >= opts.maxFiles) {
        diagnostics.push({
          severity: "error",
          code: ErrorCode.TOO_MANY_FILES,
          message: `more than ${opts.maxFiles} resource files; the rest were not read`,
          hint: "raise limits.maxFiles in gatesync.yaml, or point the source at a smaller directory",
        });
        tooMany = true;
        break;
      }
      const st = lstatSync(target);
      files.push({ path: rel, absolute: target, size: st.size, mtimeMs: st.mtimeMs });
    }
    opts.onProgress?.(files.length);
  }
  files.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  return { root, boundary, files, diagnostics };
}
