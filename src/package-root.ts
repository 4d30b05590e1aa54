/**
 * gatesync's own directory (where its package.json is): package.json, ui/, schemas/ and
 * examples/ are read from it. Found upward from this module rather than by a fixed `../..`,
 * because the same code runs at three depths — src/ (through tsx), dist/ (tsc's output) and
 * dist/bundle/ (the bundle `bin/gatesync.js` loads).
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";

function findPackageRoot(from: string): string {
  for (let dir = from; ; dir = path.dirname(dir)) {
    if (existsSync(path.join(dir, "package.json"))) return dir;
    if (path.dirname(dir) === dir) throw new Error(`no package.json above ${from}`);
  }
}

export const packageRoot = findPackageRoot(path.dirname(fileURLToPath(import.meta.url)));

/** The version in gatesync's package.json. */
export function packageVersion(): string {
  const pkg = JSON.parse(readFileSync(path.join(packageRoot, "package.json"), "utf8")) as { version?: unknown };
  return typeof pkg.version === "string" ? pkg.version : "unknown";
}
