/**
 * Growth from 10,000 to 100,000 resources (1,000 → 10,000 APIs, each its own document): the
 * floor, `gatesync validate`, a first `gatesync plan --dir` (empty state) and a first
 * `gatesync apply --dir` into the sandbox, each a spawned, cold process under /usr/bin/time,
 * `scaleReps` times: medians with their spreads. The sandbox is a process of its own
 * (`gatesync sandbox`), its peak RSS reported apart from gatesync's. gatesync's commands run as
 * in the shipped manifest's pod (memory-limit.ts): inside a memory cgroup of its limit (512 MiB)
 * where the machine lets the bench make one, with its NODE_OPTIONS; Node sizes its heap from the
 * limit, and a command whose live data does not fit fails instead of merely growing.
 */
import { mkdir, readFile, rm } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { configFromDocument } from "../src/config/config.js";
import { openStateBackend } from "../src/record/open-backend.js";
import { credentials, env, log, quick } from "./common.js";
import { cli, measureProcess, processFigures, writeBenchConfig } from "./cold.js";
import type { ProcessFigures, ProcessSample } from "./cold.js";
import type { Generated } from "./generate.js";
import type { Figure } from "./figures.js";
import { figure } from "./figures.js";
import { manifestMemory, memoryCgroup } from "./memory-limit.js";
import type { MemoryCgroup } from "./memory-limit.js";
import { startSandboxChild } from "./sandbox-child.js";

const here = path.dirname(fileURLToPath(import.meta.url));

/** The shipped manifest's memory limit and NODE_OPTIONS: gatesync's commands run with both, as in its pod. */
const manifest = manifestMemory();
const podEnv = { ...env, ...(manifest.nodeOptions === undefined ? {} : { NODE_OPTIONS: manifest.nodeOptions }) };

/** Runs of each command per size: `BENCH_SCALE_REPS`, default 3 (1 with BENCH_QUICK). */
export const scaleReps = Number(process.env.BENCH_SCALE_REPS ?? (quick ? 1 : 3));

export interface ScaleFigures {
  readonly resources: number;
  readonly runs: number;
  readonly floor: ProcessFigures;
  readonly validate: ProcessFigures;
  readonly plan: ProcessFigures;
  /** `applied`: the fewest records any run left applied. */
  readonly apply: ProcessFigures & { readonly applied: number };
  /** The sandbox process's peak RSS over a first plan and apply (not gatesync's). */
  readonly sandboxPeakRssMb: Figure;
  /** Where gatesync's commands ran: "cgroup v1 512 MiB", or "unlimited (…)" when no cgroup could be made. */
  readonly memoryLimit: string;
  /** Runs of each command that ended out of memory (heap or cgroup). */
  readonly outOfMemory: { readonly validate: number; readonly plan: number; readonly apply: number };
}

/** Exit codes recorded instead of failing the bench: a run out of memory is a result (134: the heap; 137: killed at the cgroup's limit). */
const outOfMemory = (codes: readonly number[]): number[] => [...codes, 134, 137];

/** How many runs ended out of memory. */
function outOfMemoryRuns(samples: readonly ProcessSample[]): number {
  return samples.filter((s) => s.exitCode === 134 || s.exitCode === 137).length;
}

/** Records the apply left in the config's state as applied. */
export async function appliedRecords(configFile: string): Promise<number> {
  const config = configFromDocument(parse(await readFile(configFile, "utf8")) as Record<string, unknown>, configFile, path.dirname(configFile));
  const state = openStateBackend(config, env);
  try {
    return [...(await state.read()).resources.values()].filter((r) => r.status === "applied").length;
  } finally {
    await state.close();
  }
}

/** The sandbox's objects for a generated repository, with the gateway's batch route. */
export function sandboxFixtures(g: Generated): Generated["fixtures"] {
  return {
    ...g.fixtures,
    apis: [
      ...(g.fixtures.apis ?? []),
      { id: "gw-loopback", listenPath: "/gw-batch/", upstream: "${sandbox}/gw/", authentication: true, batchProcessing: true },
    ],
    keys: [{ key: env.BATCH_KEY, apis: ["gw-loopback"] }],
  };
}

/** A first plan and a first apply into a fresh sandbox process and an empty state. */
async function firstPlanAndApply(
  g: Generated,
  work: string,
  limit: MemoryCgroup | undefined,
): Promise<{ plan: ProcessSample; apply: ProcessSample; applied: number; sandboxPeakRssMb: number }> {
  await rm(work, { recursive: true, force: true });
  await mkdir(work, { recursive: true });
  const sandbox = await startSandboxChild({ gatesync: [cli], fixtures: sandboxFixtures(g), dir: work, credentials });
  let stopped: Promise<{ peakRssMb: number }> | undefined;
  try {
    const config = await writeBenchConfig(work, sandbox.urls);
    const plan = await measureProcess([cli, "plan", "-c", config, "--dir", g.root, "--format", "json"], podEnv, outOfMemory([0]), limit);
    log(`[${g.count}] first apply into the sandbox (process ${sandbox.pid})`);
    // exit 1 when some change failed or is in doubt: measured all the same, `applied` says how many succeeded
    const apply = await measureProcess(
      [cli, "apply", "-c", config, "--dir", g.root, "--auto-approve", "--allow-empty-state"],
      podEnv,
      outOfMemory([0, 1]),
      limit,
    );
    stopped = sandbox.stop();
    const { peakRssMb } = await stopped;
    return { plan, apply, applied: await appliedRecords(config), sandboxPeakRssMb: peakRssMb };
  } finally {
    // stopped on failure too
    if (stopped === undefined) await sandbox.stop().catch(() => undefined);
  }
}

/** Each command `scaleReps` times, interleaved (a change of the machine's load touches all alike). */
export async function scaleFigures(g: Generated, dir: string): Promise<ScaleFigures> {
  const samples = { floor: [] as ProcessSample[], validate: [] as ProcessSample[], plan: [] as ProcessSample[], apply: [] as ProcessSample[] };
  let applied = Number.POSITIVE_INFINITY;
  const sandboxPeaks: number[] = [];
  // one cgroup for the size's runs: the kernel counts each process's pages while it lives
  const limit = await memoryCgroup(`gatesync-bench-${process.pid}-${g.count}`, manifest.limitMiB);
  for (let rep = 0; rep < scaleReps; rep++) {
    log(`[${g.count}] cold floor, validate, first plan (run ${rep + 1} of ${scaleReps})`);
    samples.floor.push(await measureProcess([path.join(here, "yaml-floor.mjs"), g.root], env));
    samples.validate.push(await measureProcess([cli, "validate", g.root], podEnv, outOfMemory([0]), limit));
    const first = await firstPlanAndApply(g, path.join(dir, "scale-state"), limit);
    samples.plan.push(first.plan);
    samples.apply.push(first.apply);
    applied = Math.min(applied, first.applied);
    sandboxPeaks.push(first.sandboxPeakRssMb);
  }
  await limit?.remove();
  const memoryLimit = limit?.label ?? "unlimited (no memory cgroup could be made here)";
  return {
    resources: g.count,
    runs: scaleReps,
    floor: processFigures(samples.floor),
    validate: processFigures(samples.validate),
    plan: processFigures(samples.plan),
    apply: { ...processFigures(samples.apply), applied },
    sandboxPeakRssMb: figure(sandboxPeaks),
    memoryLimit,
    outOfMemory: { validate: outOfMemoryRuns(samples.validate), plan: outOfMemoryRuns(samples.plan), apply: outOfMemoryRuns(samples.apply) },
  };
}
