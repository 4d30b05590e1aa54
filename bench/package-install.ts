/**
 * `BENCH_PARTS=package-install` (issue 60): the packed package's install against one small CLI's,
 * both from npm's warm cache, each into an empty directory, interleaved (the machine's load
 * touches them alike): the median wall time of each and their ratio. The small CLI is `semver`
 * (one package, no dependency, a bin). One untimed install of each first fills the cache
 * (`--prefer-offline`: what the cache lacks — a packument npm's install has not read before — is
 * fetched once, then every timed run reads the cache alone).
 * The tarball is `npm pack` of this checkout (its prepack builds), or `BENCH_TARBALL`'s file.
 * Each install dir's package.json denies @scarf/scarf's script, as the README's install line does.
 * Writes bench/results.package-install.json.
 *
 *   BENCH_PARTS=package-install npx tsx bench/run.ts                  # 3 runs each (BENCH_INSTALL_RUNS)
 *   BENCH_TARBALL=/tmp/gatesync-0.1.0.tgz BENCH_PARTS=package-install npx tsx bench/run.ts
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, rmSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { loadNow, log, resultsHead } from "./common.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const allowScripts = { "@scarf/scarf": false };

interface Install {
  readonly ms: number;
  /** npm's "added N packages". */
  readonly packages: number;
}

function timedInstall(spec: string): Install {
  const dir = mkdtempSync(path.join(tmpdir(), "gatesync-install-"));
  try {
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "t", version: "1.0.0", private: true, allowScripts }));
    const start = performance.now();
    const r = spawnSync("npm", ["install", "--prefer-offline", "--omit=dev", "--no-audit", "--no-fund", spec], { cwd: dir, encoding: "utf8" });
    const ms = performance.now() - start;
    if (r.status !== 0) throw new Error(`npm install ${spec}: ${r.stderr}`);
    return { ms, packages: Number(/added (\d+) package/.exec(r.stdout)?.[1] ?? Number.NaN) };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** `npm pack` of the checkout into `into` (prepack builds and strips `prepare`, postpack restores). */
function packed(into: string): string {
  const r = spawnSync("npm", ["pack", "--pack-destination", into], { cwd: root, encoding: "utf8" });
  if (r.status !== 0) throw new Error(`npm pack: ${r.stderr}`);
  return path.join(
    into,
    readdirSync(into).find((f) => f.endsWith(".tgz"))!,
  );
}

const median = (xs: readonly number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

export async function packageInstallOnly(): Promise<void> {
  const startedMs = Date.now();
  const load = loadNow();
  const runs = Number(process.env.BENCH_INSTALL_RUNS ?? 3);
  const work = mkdtempSync(path.join(tmpdir(), "gatesync-bench-pack-"));
  try {
    const tarball = process.env.BENCH_TARBALL === undefined ? packed(work) : path.resolve(process.env.BENCH_TARBALL);
    // the cache filled: the timed runs read it alone
    timedInstall("semver");
    timedInstall(tarball);
    const gatesync: Install[] = [];
    const small: Install[] = [];
    for (let i = 0; i < runs; i++) {
      small.push(timedInstall("semver"));
      gatesync.push(timedInstall(tarball));
      log(`run ${i + 1}: semver ${Math.round(small[i]!.ms)} ms, gatesync ${Math.round(gatesync[i]!.ms)} ms`);
    }
    const npm = spawnSync("npm", ["--version"], { encoding: "utf8" }).stdout.trim();
    const [packedMs, smallMs] = [median(gatesync.map((g) => g.ms)), median(small.map((s) => s.ms))];
    const results = {
      ...resultsHead("package-install", load, startedMs),
      npm,
      command: "npm install --prefer-offline --omit=dev --no-audit --no-fund SPEC (an empty directory; package.json: allowScripts)",
      allowScripts,
      runs,
      packed: { tarball: path.basename(tarball), packages: gatesync[0]!.packages, medianMs: Math.round(packedMs), ms: gatesync.map((g) => Math.round(g.ms)) },
      smallCli: { spec: "semver", packages: small[0]!.packages, medianMs: Math.round(smallMs), ms: small.map((s) => Math.round(s.ms)) },
      ratio: Math.round((packedMs / smallMs) * 10) / 10,
    };
    await writeFile(path.join(here, "results.package-install.json"), `${JSON.stringify(results, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
