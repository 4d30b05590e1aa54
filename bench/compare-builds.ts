/**
 * Before and after a change: another checkout's compiled CLI (`BENCH_BEFORE`, the directory of
 * a checkout with `dist/` built) and this one's, run on the same generated repositories,
 * interleaved (before, after, before, after …) so that a change of the machine's load touches
 * both alike — as the manifest's pod runs them (memory-limit.ts: the cgroup of its limit and its
 * NODE_OPTIONS). At 10,000 resources `gatesync validate`, a first `gatesync plan --dir` and a plan
 * against a 10,000-record state; at 100,000 a first plan, then validate, then a first `gatesync apply
 * --dir` into a sandbox process of its own (started afresh for each build; the sandbox is this
 * checkout's, its state empty). Each sample is printed
 * as it is measured and appended to bench/results.compare.json. On a loaded machine compare CPU
 * time and peak RSS: wall time follows the load.
 *
 *   BENCH_BEFORE=/tmp/before npx tsx bench/compare-builds.ts     # BENCH_COMPARE_REPS (default 1), BENCH_100K=0, BENCH_10K=0
 *   BENCH_COMPARE_COMMANDS=validate …                             # only the commands named (comma-separated: validate, first plan, plan, first apply)
 *   BENCH_REPO_100K=dir …                                         # a repository generated before (its config/)
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cli, measureProcess, seedState, writeBenchConfig } from "./cold.js";
import { credentials, env, log } from "./common.js";
import { generateRepository } from "./generate.js";
import type { Generated } from "./generate.js";
import { manifestMemory, memoryCgroup } from "./memory-limit.js";
import type { MemoryCgroup } from "./memory-limit.js";
import { startSandboxChild } from "./sandbox-child.js";
import { appliedRecords, sandboxFixtures } from "./scale.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const oas = path.resolve(here, "../test/fixtures/shared/corpus/oas");
const before = process.env.BENCH_BEFORE;
if (before === undefined) throw new Error("BENCH_BEFORE: the checkout to compare with (its dist/ built)");
const builds = [
  { name: "before", cli: path.join(before, "bin/gatesync.js") },
  { name: "after", cli },
];
const reps = Number(process.env.BENCH_COMPARE_REPS ?? 1);
const manifest = manifestMemory();
const podEnv = { ...env, ...(manifest.nodeOptions === undefined ? {} : { NODE_OPTIONS: manifest.nodeOptions }) };
const offline = "http://127.0.0.1:9/";
const samples: unknown[] = [];
const out = path.join(here, process.env.BENCH_COMPARE_OUT ?? "results.compare.json");

const only = process.env.BENCH_COMPARE_COMMANDS?.split(",");

type Run = (
  build: { name: string; cli: string },
  limit: MemoryCgroup | undefined,
) => Promise<{ sample: Awaited<ReturnType<typeof measureProcess>>; applied?: number }>;

async function measure(size: number, command: string, args: (build: string) => string[]): Promise<void> {
  await measureRuns(size, command, async (build, limit) => ({ sample: await measureProcess([build.cli, ...args(build.cli)], podEnv, [0, 134, 137], limit) }));
}

/** A first apply into a sandbox process started afresh for each run, its state empty; `applied`: the records it left applied. */
async function measureApply(size: number, g: Generated, work: string): Promise<void> {
  await measureRuns(size, "first apply --dir", async (build, limit) => {
    await rm(work, { recursive: true, force: true });
    await mkdir(work, { recursive: true });
    const sandbox = await startSandboxChild({ gatesync: [cli], fixtures: sandboxFixtures(g), dir: work, credentials });
    try {
      const config = await writeBenchConfig(work, sandbox.urls);
      const sample = await measureProcess([build.cli, "apply", "-c", config, "--dir", g.root, "--auto-approve"], podEnv, [0, 1, 134, 137], limit);
      return { sample, applied: await appliedRecords(config) };
    } finally {
      await sandbox.stop().catch(() => undefined);
    }
  });
}

async function measureRuns(size: number, command: string, run: Run): Promise<void> {
  if (only !== undefined && !only.some((c) => command.startsWith(c))) return;
  const limit = await memoryCgroup(`gatesync-compare-${process.pid}-${size}`, manifest.limitMiB);
  try {
    for (let rep = 0; rep < reps; rep++) {
      for (const build of builds) {
        const { sample: s, applied } = await run(build, limit);
        const sample = {
          size,
          command,
          build: build.name,
          exitCode: s.exitCode,
          wallMs: Math.round(s.wallMs),
          cpuMs: Math.round(s.cpuMs),
          peakRssMiB: Math.round(s.peakRssMb),
          load: loadavg()[0]!.toFixed(1),
          ...(applied === undefined ? {} : { applied }),
        };
        samples.push(sample);
        log(JSON.stringify(sample));
        await writeFile(out, `${JSON.stringify({ memoryLimit: limit?.label ?? "unlimited", samples }, null, 2)}\n`);
      }
    }
  } finally {
    await limit?.remove();
  }
}

/** A config whose state is empty (a first plan) or seeded with `g`'s records. */
async function planConfig(dir: string, g: Generated | undefined): Promise<string> {
  await mkdir(dir, { recursive: true });
  const config = await writeBenchConfig(dir, { gateway: offline, portal: offline, dashboard: offline, llm: offline });
  if (g !== undefined) await seedState(config, g, env);
  return config;
}

const dir = await mkdtemp(path.join(tmpdir(), "gatesync-compare-"));
if (process.env.BENCH_10K !== "0") {
  log("[10000] generating");
  const g10k = await generateRepository(path.join(dir, "10000"), 10_000, oas);
  const empty10k = await planConfig(path.join(dir, "empty-10k"), undefined);
  const seeded10k = await planConfig(path.join(dir, "seeded-10k"), g10k);
  await measure(10_000, "validate", () => ["validate", g10k.root]);
  await measure(10_000, "first plan --dir", () => ["plan", "-c", empty10k, "--dir", g10k.root, "--format", "json"]);
  await measure(10_000, "plan --dir, 10,000-record state", () => ["plan", "-c", seeded10k, "--dir", g10k.root, "--format", "json"]);
}
if (process.env.BENCH_100K !== "0") {
  const root100k = process.env.BENCH_REPO_100K;
  const g100k = root100k === undefined ? await generateRepository(path.join(dir, "100000"), 100_000, oas) : undefined;
  const repo100k = g100k?.root ?? root100k!;
  const empty100k = await planConfig(path.join(dir, "empty-100k"), undefined);
  await measure(100_000, "first plan --dir", () => ["plan", "-c", empty100k, "--dir", repo100k, "--format", "json"]);
  await measure(100_000, "validate", () => ["validate", repo100k]);
  // the apply needs the sandbox's objects of a repository generated in this run
  if (g100k !== undefined) await measureApply(100_000, g100k, path.join(dir, "apply-100k"));
}
