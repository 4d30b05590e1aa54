/**
 * `gatesync validate DIR --only FILE…` (the pre-commit hook's entry, .pre-commit-hooks.yaml):
 * the whole directory is validated — a reference in a changed file is checked against every
 * resource — and only the findings located in the named files (and those of no file: the
 * settings) are reported. Files are named as findings name them: from the repository's root.
 */
import { existsSync, realpathSync } from "node:fs";
import path from "node:path";
import type { Diagnostic } from "../../../errors.js";
import { isInside, toPosix } from "../../../file-paths.js";
import { workTreeOf } from "../../../source/repository-path.js";

const real = (p: string): string => (existsSync(p) ? realpathSync(p) : path.resolve(p));

/** The named files, each as a finding names it (from the work tree's root, else the working directory). */
export function onlyFilesOf(files: readonly string[], cwd = process.cwd()): Set<string> {
  const top = workTreeOf(real(cwd)) ?? real(cwd);
  return new Set(files.map((f) => toPosix(path.relative(top, real(path.resolve(cwd, f))))));
}

/** Whether any of the named files lies in the resource directory: none, and there is nothing to validate. */
export function anyInside(files: readonly string[], dir: string, cwd = process.cwd()): boolean {
  const root = real(path.resolve(cwd, dir));
  return files.some((f) => isInside(real(path.resolve(cwd, f)), root));
}

/** The findings of the named files, and those of no file. */
export function onlyFindingsOf(diagnostics: readonly Diagnostic[], files: ReadonlySet<string>): Diagnostic[] {
  return diagnostics.filter((d) => d.file === undefined || files.has(d.file));
}
