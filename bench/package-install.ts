/**
 * The packed package's install against one small CLI's, both from npm's cache (`--offline`),
 * each into an empty directory, interleaved (the machine's load touches them alike): the median
 * wall time of each and their ratio. The small CLI is `semver` (one package, no dependency, a bin),
 * already in the cache as a dependency of gatesync's tree.
 *
 *   npm pack --pack-destination /tmp && tsx bench/package-install.ts /tmp/gatesync-0.1.0.tgz [runs]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { writeOfflineLock } from "../scripts/pack/offline-lock.js";

const [tarball, runsArg] = process.argv.slice(2);
if (tarball === undefined) throw new Error("usage: package-install.ts TARBALL [runs]");
const runs = Number(runsArg ?? 3);

const smallCli = "semver";
const smallCliVersion = (
  JSON.parse(readFileSync(path.resolve(import.meta.dirname, "../package-lock.json"), "utf8")) as { packages: Record<string, { version: string }> }
).packages[`node_modules/${smallCli}`]!.version;

/** One install into an empty directory: the tarball by its path, the small CLI by its package.json (a name alone asks the registry). */
function timedInstall(tarballPath?: string): number {
  const dir = mkdtempSync(path.join(tmpdir(), "gatesync-install-"));
  try {
    const dependencies = tarballPath === undefined ? { [smallCli]: smallCliVersion } : {};
    writeFileSync(
      path.join(dir, "package.json"),
      JSON.stringify({ name: "t", version: "1.0.0", private: true, dependencies, allowScripts: { "@scarf/scarf": false } }),
    );
    // a fresh cache (npm ci's) holds tarballs, not registry documents: both installs are pinned to our lock
    writeOfflineLock(dir, tarballPath === undefined ? smallCli : undefined);
    const spec = tarballPath === undefined ? [] : [tarballPath];
    const start = performance.now();
    const r = spawnSync("npm", ["install", "--offline", "--omit=dev", "--no-audit", "--no-fund", ...spec], { cwd: dir, encoding: "utf8" });
    const ms = performance.now() - start;
    if (r.status !== 0) throw new Error(`npm install ${tarballPath ?? smallCli}: ${r.stderr}`);
    return ms;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const packed: number[] = [];
const small: number[] = [];
for (let i = 0; i < runs; i++) {
  small.push(timedInstall());
  packed.push(timedInstall(path.resolve(tarball)));
}
const row = { runs, packedMs: Math.round(median(packed)), smallCliMs: Math.round(median(small)), ratio: Number((median(packed) / median(small)).toFixed(1)) };
process.stdout.write(`${JSON.stringify(row)}\n`);
