/**
 * `npm pack`'s two steps around the tarball (package.json's prepack and postpack).
 *
 * `strip` (after the build) takes `prepare` out of package.json, so the packed package has no
 * script an installer must approve: npm 11 lists a dependency's `prepare` among the install
 * scripts "not yet covered by allowScripts", and a tarball holds its built dist/ already. npm
 * packs the package.json on disk after prepack (its directory fetcher re-reads it, and runs
 * `prepare` only when it is still there), so the build runs once. `restore` puts the file back
 * byte for byte, its modification time too; `strip` restores first, so a pack that failed half way leaves nothing behind.
 * A git install (the from-source way) still runs `prepare`: it builds from the clone.
 */
import { existsSync, readFileSync, renameSync, statSync, utimesSync, writeFileSync } from "node:fs";
import path from "node:path";

const root = path.resolve(import.meta.dirname, "../..");
const manifest = path.join(root, "package.json");
const backup = path.join(root, "dist", ".package.json.before-pack");

function restore(): void {
  if (existsSync(backup)) renameSync(backup, manifest);
}

function strip(): void {
  restore();
  const text = readFileSync(manifest, "utf8");
  const pkg = JSON.parse(text) as { scripts?: Record<string, string> };
  writeFileSync(backup, text);
  // and its times: a build is current while it is newer than package.json (test/helpers/cli.ts), and a pack built it just now
  const { atime, mtime } = statSync(manifest);
  utimesSync(backup, atime, mtime);
  delete pkg.scripts?.prepare;
  writeFileSync(manifest, `${JSON.stringify(pkg, null, 2)}\n`);
}

const step = process.argv[2];
if (step === "strip") strip();
else if (step === "restore") restore();
else {
  process.stderr.write("usage: manifest.ts strip|restore\n");
  process.exitCode = 2;
}
