/**
 * Whole-process figures, as users meet them: `gatesync validate` and `gatesync plan --dir`
 * spawned cold (the compiled CLI), beside a process that only parses the same files with
 * `yaml` on one thread — the floor every ratio is taken to, measured in the same run. Wall
 * time, CPU time (user + system) and peak RSS come from /usr/bin/time.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { parse } from "yaml";
import { configFromDocument } from "../src/config/config.js";
import { EnvFileSecretSource } from "../src/secrets/env-file-source.js";
import { SecretResolver } from "../src/secrets/resolver.js";
import { prepareDesired } from "../src/plan/prepare-desired.js";
import { openStateBackend } from "../src/record/open-backend.js";
import { appliedRecord } from "../src/apply/records/applied-record.js";
import { RepositoryValidator } from "../src/validate/repository/repository-validator.js";
import type { Generated } from "./generate.js";
import type { MemoryCgroup } from "./memory-limit.js";
import type { Figure } from "./figures.js";
import { figure } from "./figures.js";

const here = path.dirname(fileURLToPath(import.meta.url));
/** The compiled CLI, as users run it. */
export const cli = path.resolve(here, "../bin/gatesync.js");

export interface ProcessSample {
  /** 134: V8's heap out of memory (SIGABRT); 137: killed by the kernel (a cgroup's limit). */
  readonly exitCode?: number;
  readonly wallMs: number;
  readonly cpuMs: number;
  readonly peakRssMb: number;
}

export interface ProcessFigures {
  readonly wallMs: Figure;
  readonly cpuMs: Figure;
  readonly peakRssMb: Figure;
}

/** Output kept of a measured process (what the bench reads of it: the plan summary at 10,000 resources). */
const keptStdout = 32 * 1024 * 1024;

/**
 * Runs `node args` under /usr/bin/time — inside `limit` (a memory cgroup, see memory-limit.ts)
 * when given; fails unless it exits with one of `codes`.
 */
export async function measureProcess(
  args: readonly string[],
  env: Record<string, string>,
  codes: readonly number[] = [0],
  limit?: MemoryCgroup,
): Promise<ProcessSample & { stdout: string }> {
  const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-time-"));
  const out = path.join(dir, "time");
  try {
    // wall time to the millisecond (/usr/bin/time's %e has 10 ms steps: at `node -e 0`'s ~50 ms, a fifth of it)
    const spawned = performance.now();
    const child = spawn("/usr/bin/time", ["-f", "%e %U %S %M", "-o", out, ...(limit?.wrap ?? []), process.execPath, ...args], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let stdout = "";
    let stderr = "";
    // what a large plan prints (345 MB of JSON at 100,000 resources) is read, not all kept
    child.stdout.on("data", (b: Buffer) => {
      if (stdout.length < keptStdout) stdout += b.toString();
    });
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    const code = await new Promise<number>((resolve) => child.on("close", (c) => resolve(c ?? -1)));
    const wallMs = Math.round(performance.now() - spawned);
    if (!codes.includes(code)) throw new Error(`node ${args.join(" ")} exited ${code}: ${stderr.slice(0, 2000)}${stdout.slice(0, 500)}`);
    const [, user = "0", sys = "0", rssKb = "0"] = (await readFile(out, "utf8")).trim().split("\n").pop()!.split(" ");
    return { exitCode: code, wallMs, cpuMs: (Number(user) + Number(sys)) * 1000, peakRssMb: Number(rssKb) / 1024, stdout };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

/** A gatesync.yaml for `plan --dir`/`apply --dir` with its state at `statePath` and targets at `urls`. */
export async function writeBenchConfig(dir: string, urls: { gateway: string; portal: string; dashboard: string; llm: string }): Promise<string> {
  const file = path.join(dir, "gatesync.yaml");
  const config = [
    "apiVersion: gatesync.dev/v1",
    "kind: GatesyncConfig",
    `source: { directory: ${JSON.stringify(dir)} }`,
    "secrets: { env: [BENCH_SECRET] }",
    "targets:",
    `  gateway: { url: ${JSON.stringify(urls.gateway)}, credentialEnv: GW_KEY, batch: { listenPath: /gw-batch/, apiId: gw-loopback, keyEnv: BATCH_KEY, maxSize: 50 }, rateLimit: { concurrency: 32, requestsPerSecond: 5000 } }`,
    `  portal: { url: ${JSON.stringify(urls.portal)}, credentialEnv: PORTAL_KEY, rateLimit: { concurrency: 32, requestsPerSecond: 5000 } }`,
    `  dashboard: { url: ${JSON.stringify(urls.dashboard)}, tokenEnv: DASH_KEY, rateLimit: { concurrency: 32, requestsPerSecond: 5000 } }`,
    `  llm: { url: ${JSON.stringify(urls.llm)}, credentialEnv: LLM_KEY, rateLimit: { concurrency: 32, requestsPerSecond: 5000 } }`,
    "",
  ].join("\n");
  await writeFile(file, config);
  return file;
}

/** Fills the config's state with a record per resource, as if everything had been applied. */
export async function seedState(configFile: string, g: Generated, env: Record<string, string>): Promise<number> {
  const raw = parse(await readFile(configFile, "utf8")) as Record<string, unknown>;
  const config = configFromDocument(raw, configFile, path.dirname(configFile));
  const validator = new RepositoryValidator();
  const secrets = new SecretResolver(new EnvFileSecretSource(env, g.root));
  const result = await validator.validate({ root: g.root, secrets: { source: secrets, missing: "error" } });
  await validator.close();
  const hashKey = "bench-hash-key";
  const desired = prepareDesired(result.resources, { secrets, hashKey, appTypeProviders: new Set() });
  const now = new Date().toISOString();
  const state = openStateBackend(config, env);
  const lock = await state.lock("bench");
  try {
    await state.initialise(hashKey);
    await state.replaceAll({
      lineage: "bench",
      serial: 1,
      hashKey,
      resources: new Map(desired.desired.map((d) => [d.id, appliedRecord(d, undefined, { now, quotaReset: true })])),
    });
  } finally {
    await lock.release();
    await state.close();
  }
  return desired.desired.length;
}

/** Median and spread of each measure of a process's runs. */
export function processFigures(samples: readonly ProcessSample[]): ProcessFigures {
  return { wallMs: figure(samples.map((s) => s.wallMs)), cpuMs: figure(samples.map((s) => s.cpuMs)), peakRssMb: figure(samples.map((s) => s.peakRssMb)) };
}

export interface ColdFigures {
  readonly floor: ProcessFigures;
  readonly validate: ProcessFigures;
  readonly plan?: ProcessFigures;
}

/** The floor, cold validate and (given a config with a seeded state) cold plan --dir, `n` times each, interleaved. */
export async function coldFigures(g: Generated, n: number, env: Record<string, string>, planConfig?: string): Promise<ColdFigures> {
  const floor: ProcessSample[] = [];
  const validate: ProcessSample[] = [];
  const plan: ProcessSample[] = [];
  for (let i = 0; i < n; i++) {
    // interleaved, so that a change of the machine's load touches all three alike
    floor.push(await measureProcess([path.join(here, "yaml-floor.mjs"), g.root], env));
    validate.push(await measureProcess([cli, "validate", g.root], env));
    if (planConfig !== undefined) {
      const run = await measureProcess([cli, "plan", "-c", planConfig, "--dir", g.root, "--format", "json"], env);
      const summary = (JSON.parse(run.stdout) as { summary?: Record<string, number> }).summary;
      if (summary !== undefined && (summary.create ?? 0) + (summary.update ?? 0) > 0)
        throw new Error(`plan against the seeded state has changes: ${JSON.stringify(summary)}`);
      plan.push(run);
    }
  }
  return { floor: processFigures(floor), validate: processFigures(validate), ...(planConfig === undefined ? {} : { plan: processFigures(plan) }) };
}
