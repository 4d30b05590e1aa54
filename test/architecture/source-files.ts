/**
 * The files the size rules read: every hand-written .ts, .js and .mjs file under the project's
 * code folders. Generated code is left out by path, each with the reason it is not written by hand.
 */
import { readdirSync } from "node:fs";
import path from "node:path";

export const projectRoot = path.resolve(import.meta.dirname, "../..");

/** The folders whose code a maintainer writes and reads. */
const codeFolders = ["src", "test", "bench", "scripts", "bin", "ui"] as const;

/**
 * Paths (relative to the project, `/`-separated prefixes) that hold generated code: nobody edits
 * them, so nobody has to read them in pieces.
 */
export const generatedPaths: readonly { prefix: string; why: string }[] = [
  { prefix: "src/validate/compiled/", why: "ajv's standalone validators, written by `npm run schemas` (scripts/standalone-validators.ts)" },
  { prefix: "bench/out/", why: "the bench's own output, written by `npm run bench`" },
];

/** Installed packages are no one's code here. */
const skippedFolders = new Set(["node_modules"]);

const codeFile = /\.(ts|js|mjs)$/;

function walk(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return skippedFolders.has(entry.name) ? [] : walk(full);
    return codeFile.test(entry.name) ? [full] : [];
  });
}

/** Project-relative, `/`-separated. */
export function relativeName(file: string): string {
  return path.relative(projectRoot, file).split(path.sep).join("/");
}

export function isGenerated(relative: string): boolean {
  return generatedPaths.some((g) => relative.startsWith(g.prefix));
}

/** Every hand-written code file, project-relative, sorted. */
export function handWrittenFiles(folders: readonly string[] = codeFolders): string[] {
  return folders
    .flatMap((folder) => walk(path.join(projectRoot, folder)))
    .map(relativeName)
    .filter((relative) => !isGenerated(relative))
    .sort();
}
