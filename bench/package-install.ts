/**
 * The packed package's install against one small CLI's, both from npm's cache (`--offline`),
 * each into an empty directory, interleaved (the machine's load touches them alike): the median
 * wall time of each and their ratio. The small CLI is `semver` (one package, no dependency, a bin),
 * already in the cache as a dependency of gatesync's tree.
 *
 *   npm pack --pack-destination /tmp && tsx bench/package-install.ts /tmp/gatesync-0.1.0.tgz [runs]
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";

const [tarball, runsArg] = process.argv.slice(2);
if (tarball === undefined) throw new Error("usage: package-install.ts TARBALL [runs]");
const runs = Number(runsArg ?? 3);

function timedInstall(spec: string): number {
  const dir = mkdtempSync(path.join(tmpdir(), "gatesync-install-"));
  try {
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "t", version: "1.0.0", private: true, allowScripts: { "@scarf/scarf": false } }));
    const start = performance.now();
    const r = spawnSync("npm", ["install", "--offline", "--omit=dev", "--no-audit", "--no-fund", spec], { cwd: dir, encoding: "utf8" });
    const ms = performance.now() - start;
    if (r.status !== 0) throw new Error(`npm install ${spec}: ${r.stderr}`);
    return ms;
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;
const packed: number[] = [];
const small: number[] = [];
for (let i = 0; i < runs; i++) {
  small.push(timedInstall("semver"));
  packed.push(timedInstall(path.resolve(tarball)));
}
const row = { runs, packedMs: Math.round(median(packed)), smallCliMs: Math.round(median(small)), ratio: Number((median(packed) / median(small)).toFixed(1)) };
process.stdout.write(`${JSON.stringify(row)}\n`);
