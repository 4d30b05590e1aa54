/**
 * Files as the repository names them. Validation names a file relative to the resource
 * directory (`apis/orders.yaml`); what gatesync prints — text, JSON, CI annotations, the
 * daemon's log and /status — names it from the repository's root (`config/apis/orders.yaml`),
 * the path a user opens, `git log` takes and a CI annotation needs.
 */
import { existsSync, realpathSync } from "node:fs";
import path from "node:path";
import type { Diagnostic } from "../errors.js";
import { isInside, repositoryPath, toPosix } from "../file-paths.js";

/** Diagnostics whose files are named from the repository's root. */
export function inRepository(diagnostics: readonly Diagnostic[], prefix: string): Diagnostic[] {
  return diagnostics.map((d) => (d.file === undefined || prefix === "" ? d : { ...d, file: repositoryPath(prefix, d.file) }));
}

const real = (p: string): string => {
  try {
    return realpathSync(p);
  } catch {
    return path.resolve(p);
  }
};

/**
 * The top of the git work tree holding `dir`: the nearest directory at or above it with a
 * `.git` (a directory, or the file of a linked work tree or submodule) — where `git rev-parse
 * --show-toplevel` stops, found without starting git (a validate of a small repository is
 * over in less time than git takes to start).
 */
export function workTreeOf(dir: string): string | undefined {
  for (let at = dir; ; at = path.dirname(at)) {
    if (existsSync(path.join(at, ".git"))) return at;
    if (path.dirname(at) === at) return undefined;
  }
}

/**
 * Where the resource directory `root` lies in its repository: below `boundary` (a git source's
 * clone), else in the git work tree holding it (a checkout), else in the working directory;
 * "" when it is none of these (its files are then named as they are).
 */
export function repositoryPrefix(root: string, boundary?: string): string {
  if (boundary !== undefined && real(boundary) !== real(root)) return toPosix(path.relative(real(boundary), real(root)));
  const top = workTreeOf(real(root));
  if (top !== undefined) return toPosix(path.relative(top, real(root)));
  const cwd = real(process.cwd());
  return isInside(real(root), cwd) ? toPosix(path.relative(cwd, real(root))) : "";
}
