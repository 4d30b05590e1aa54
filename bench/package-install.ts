/**
 * `BENCH_PARTS=package-install` (issue 60): the packed package's install against one small CLI's,
 * both from npm's cache, each into an empty directory, interleaved (the machine's load
 * touches them alike): the median wall time of each and their ratio. The small CLI is `semver`
 * (one package, no dependency, a bin). Both read npm's cache alone (`--offline`), pinned to our
 * lock by scripts/pack/offline-lock.ts: `npm ci` cached the tarballs, not the registry's documents.
 * The tarball is `npm pack` of this checkout (its prepack builds), or `BENCH_TARBALL`'s file.
 * Each install dir's package.json denies @scarf/scarf's script, as the README's install line does.
 * Writes bench/results.package-install.json.
 *
 *   BENCH_PARTS=package-install npx tsx bench/run.ts                  # 3 runs each (BENCH_INSTALL_RUNS)
 *   BENCH_TARBALL=/tmp/gatesync-0.1.0.tgz BENCH_PARTS=package-install npx tsx bench/run.ts
 */
import { spawnSync } from "node:child_process";
import { mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { writeOfflineLock } from "../scripts/pack/offline-lock.js";
import { loadNow, log, resultsHead } from "./common.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const root = path.resolve(here, "..");
const allowScripts = { "@scarf/scarf": false };

interface Install {
  readonly ms: number;
  /** npm's "added N packages". */
  readonly packages: number;
}

const smallCli = "semver";
const smallCliVersion = (JSON.parse(readFileSync(path.join(root, "package-lock.json"), "utf8")) as { packages: Record<string, { version: string }> }).packages[
  `node_modules/${smallCli}`
]!.version;

/** One install into an empty directory: the tarball by its path, the small CLI by its package.json (a name alone asks the registry). */
function timedInstall(tarball?: string): Install {
  const dir = mkdtempSync(path.join(tmpdir(), "gatesync-install-"));
  try {
    const dependencies = tarball === undefined ? { [smallCli]: smallCliVersion } : {};
    writeFileSync(path.join(dir, "package.json"), JSON.stringify({ name: "t", version: "1.0.0", private: true, dependencies, allowScripts }));
    // npm ci's cache holds tarballs, not the registry's documents: both installs are pinned to our lock
    writeOfflineLock(dir, tarball === undefined ? smallCli : undefined);
    const start = performance.now();
    const r = spawnSync("npm", ["install", "--offline", "--omit=dev", "--no-audit", "--no-fund", ...(tarball === undefined ? [] : [tarball])], {
      cwd: dir,
      encoding: "utf8",
    });
    const ms = performance.now() - start;
    if (r.status !== 0) throw new Error(`npm install ${tarball ?? smallCli}: ${r.stderr}`);
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
    const gatesync: Install[] = [];
    const small: Install[] = [];
    for (let i = 0; i < runs; i++) {
      small.push(timedInstall());
      gatesync.push(timedInstall(tarball));
      log(`run ${i + 1}: semver ${Math.round(small[i]!.ms)} ms, gatesync ${Math.round(gatesync[i]!.ms)} ms`);
    }
    const npm = spawnSync("npm", ["--version"], { encoding: "utf8" }).stdout.trim();
    const [packedMs, smallMs] = [median(gatesync.map((g) => g.ms)), median(small.map((s) => s.ms))];
    const results = {
      ...resultsHead("package-install", load, startedMs),
      npm,
      command:
        "npm install --offline --omit=dev --no-audit --no-fund [TARBALL] (an empty directory; package.json: allowScripts, the small CLI as a dependency; a lock pinned to ours)",
      allowScripts,
      runs,
      packed: { tarball: path.basename(tarball), packages: gatesync[0]!.packages, medianMs: Math.round(packedMs), ms: gatesync.map((g) => Math.round(g.ms)) },
      smallCli: { spec: `${smallCli}@${smallCliVersion}`, packages: small[0]!.packages, medianMs: Math.round(smallMs), ms: small.map((s) => Math.round(s.ms)) },
      ratio: Math.round((packedMs / smallMs) * 10) / 10,
    };
    await writeFile(path.join(here, "results.package-install.json"), `${JSON.stringify(results, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}
