/**
 * `BENCH_PARTS=environments`: 20 environments of the realistic 1,000-resource repository in one
 * `gatesync run` (a spawned process with the manifest's NODE_OPTIONS; one sandbox per
 * environment, in this process): the first apply of all of them, a no-op reconcile of all of
 * them (time and calls), a forced re-plan of all of them (`POST /sync`), a one-value change in
 * one environment (calls at each sandbox), and the daemon's peak RSS. Then two replicas on
 * PostgreSQL: how the environments split, and how long an environment takes to move to the
 * survivor after its leader is killed (SIGKILL). Writes bench/results.environments.json.
 */
import { spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import type { ChildProcess } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { startSandbox } from "../src/sandbox/sandbox.js";
import type { SandboxHandle } from "../src/sandbox/sandbox.js";
import { databaseUrl, postgresReachable } from "./apply-rate.js";
import { cli } from "./cold.js";
import { credentials, env, log, quick } from "./common.js";
import { generateRepository } from "./generate.js";
import type { Generated } from "./generate.js";
import { manifestMemory } from "./memory-limit.js";
import { loadCorpus, openApiVariant } from "./openapi-variants.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const oas = path.resolve(here, "../test/fixtures/shared/corpus/oas");
const count = Number(process.env.BENCH_ENVIRONMENTS ?? 20);
const names = Array.from({ length: count }, (_, i) => `e${String(i + 1).padStart(2, "0")}`);
const syncToken = "bench-sync-token";
const hookSecret = "bench-webhook-secret";

interface EnvStatus {
  environment: string;
  leader: string | null;
  synced: boolean;
  lastRun: { result: string; reason: string; startedAt: string; durationMs: number; calls?: Record<string, number> } | null;
}
interface Status {
  environments: EnvStatus[];
  fleet?: { replica: string; leads: string[] };
}

/**
 * The generated documents gatesync refuses (today one corpus document, every 13th API, declares
 * neither its `{id}` path parameter nor its security scheme) are generated again from the rest of
 * the corpus: every environment must apply the whole repository.
 */
async function withoutRefusedDocuments(g: Generated): Promise<number> {
  const config = path.join(path.dirname(g.root), "validate.yaml");
  await writeFile(
    config,
    `apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ${g.root} }\nsecrets: { env: [BENCH_SECRET] }\ntargets: { gateway: { url: http://127.0.0.1:9, credentialEnv: GW_KEY } }\nvalues: { bench_rate: 7 }\n`,
  );
  const out = await new Promise<string>((resolve) => {
    const child = spawn(process.execPath, [cli, "validate", "--config", config, "--format", "json"], {
      env: { ...process.env, ...env },
      stdio: ["ignore", "pipe", "ignore"],
    });
    let text = "";
    child.stdout.on("data", (b: Buffer) => (text += b.toString()));
    child.on("close", () => resolve(text));
  });
  const refused = new Set([...out.matchAll(/openapi\/api-(\d+)\.yaml/g)].map((m) => Number(m[1])));
  const corpus = loadCorpus(oas);
  for (const k of refused) {
    const others = corpus.filter((_, i) => i !== k % corpus.length);
    await writeFile(path.join(g.root, "openapi", `api-${k}.yaml`), openApiVariant(others, k));
  }
  return refused.size;
}

/** The repository with one resource whose rate is each environment's value `bench_rate`. */
async function withValue(g: Generated): Promise<string> {
  const target = g.files.find((f) => f.startsWith("orgkey/"))!;
  const file = path.join(g.root, target);
  let first = true;
  await writeFile(
    file,
    (await readFile(file, "utf8")).replace(/rate: \d+/g, (m) => {
      if (!first) return m;
      first = false;
      return "rate: ${var:bench_rate}";
    }),
  );
  return target;
}

function configText(g: Generated, boxes: readonly SandboxHandle[], state: string, rates: ReadonlyMap<string, number>): string {
  const envs = names
    .map((n, i) => {
      const b = boxes[i]!.urls;
      return `  ${n}:
    values: { bench_rate: ${rates.get(n) ?? 7} }
    targets:
      gateway: { url: ${b.gateway}, credentialEnv: GW_KEY, rateLimit: { concurrency: 32, requestsPerSecond: 5000 } }
      portal: { url: ${b.portal}, credentialEnv: PORTAL_KEY, rateLimit: { concurrency: 32, requestsPerSecond: 5000 } }
      dashboard: { url: ${b.dashboard}, tokenEnv: DASH_KEY, rateLimit: { concurrency: 32, requestsPerSecond: 5000 } }
      llm: { url: ${b.llm}, credentialEnv: LLM_KEY, rateLimit: { concurrency: 32, requestsPerSecond: 5000 } }
`;
    })
    .join("");
  return `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ${g.root} }
secrets: { env: [BENCH_SECRET] }
targets:
  gateway: { url: http://127.0.0.1:9, credentialEnv: GW_KEY }
environments:
${envs}state: ${state}
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN, webhookSecretEnv: HOOK_SECRET }
retries: { max: 4, baseDelayMs: 50, maxDelayMs: 500, timeoutMs: 30000 }
`;
}

interface Daemon {
  readonly child: ChildProcess;
  readonly url: string;
  output(): string;
}

async function spawnDaemon(config: string, extra: Record<string, string> = {}): Promise<Daemon> {
  const manifest = manifestMemory();
  const child = spawn(process.execPath, [cli, "run", "--config", config], {
    env: {
      ...process.env,
      ...env,
      SYNC_TOKEN: syncToken,
      HOOK_SECRET: hookSecret,
      GATESYNC_LOG_LEVEL: "info",
      GATESYNC_LOG_FORMAT: "json",
      ...(manifest.nodeOptions === undefined ? {} : { NODE_OPTIONS: manifest.nodeOptions }),
      ...extra,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let url: string | undefined;
  const take = (b: Buffer): void => {
    out = (out + b.toString()).slice(-20_000);
    url ??= /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out)?.[1];
  };
  child.stdout.on("data", take);
  child.stderr.on("data", take);
  for (let i = 0; i < 1200; i++) {
    if (url !== undefined) return { child, url, output: () => out };
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  throw new Error(`the daemon did not listen:\n${out.slice(-3000)}`);
}

async function status(url: string): Promise<Status> {
  const res = await fetch(`${url}/status`);
  return (await res.json()) as Status;
}

async function until<T>(read: () => Promise<T>, ok: (v: T) => boolean, ms: number, what: string): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read().catch(() => undefined);
    if (v !== undefined && ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting ${what}`);
    await sleep(100);
  }
}

async function peakRssMb(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  return Number(/^VmHWM:\s+(\d+)/m.exec(text)?.[1] ?? Number.NaN) / 1024;
}

/**
 * Rounds of every environment after one trigger: the wall time from the trigger to the last
 * environment's run, and the sum of the runs' own durations (they take turns).
 */
async function rounds(url: string, reason: "webhook" | "sync", n: number): Promise<{ wallMs: number[]; runsMs: number[]; results: string[] }> {
  const wallMs: number[] = [];
  const runsMs: number[] = [];
  const results = new Set<string>();
  for (let i = 0; i < n; i++) {
    const since = new Date().toISOString();
    const t = performance.now();
    const body = "{}";
    const headers: Record<string, string> =
      reason === "sync"
        ? { authorization: `Bearer ${syncToken}` }
        : { "content-type": "application/json", "x-hub-signature-256": `sha256=${createHmac("sha256", hookSecret).update(body).digest("hex")}` };
    const res = await fetch(`${url}/${reason === "sync" ? "sync" : "hooks/git"}`, { method: "POST", headers, ...(reason === "sync" ? {} : { body }) });
    if (res.status !== 202) throw new Error(`${reason} answered ${res.status}`);
    const s = await until(
      () => status(url),
      (x) => x.environments.every((e) => e.lastRun !== null && e.lastRun.reason === reason && e.lastRun.startedAt >= since),
      600_000,
      `for the ${reason} round`,
    );
    wallMs.push(Math.round(performance.now() - t));
    runsMs.push(s.environments.reduce((sum, e) => sum + (e.lastRun?.durationMs ?? 0), 0));
    for (const e of s.environments) results.add(e.lastRun!.result);
  }
  return { wallMs, runsMs, results: [...results] };
}

const writes = (b: SandboxHandle): number => b.inspect.calls().log.filter((c) => !c.internal && c.method !== "GET").length;

async function sandboxes(g: Generated): Promise<SandboxHandle[]> {
  const boxes: SandboxHandle[] = [];
  for (let i = 0; i < count; i++) boxes.push(await startSandbox({ credentials, fixtures: g.fixtures, logSize: 5000 }));
  return boxes;
}

async function stopDaemon(d: Daemon): Promise<void> {
  const closed = new Promise((resolve) => d.child.once("close", resolve));
  d.child.kill("SIGTERM");
  await closed;
}

/** One daemon, SQLite states: first apply, no-op round, forced re-plan, one value in one environment, peak RSS. */
async function oneDaemon(dir: string, g: Generated): Promise<Record<string, unknown>> {
  const boxes = await sandboxes(g);
  const rates = new Map(names.map((n) => [n, 7]));
  const config = path.join(dir, "gatesync.yaml");
  await writeFile(config, configText(g, boxes, `{ backend: sqlite, path: ${path.join(dir, "state.db")} }`, rates));
  const t0 = Date.now();
  const d = await spawnDaemon(config);
  try {
    log(`[environments] first apply of ${count} × ${g.count} resources`);
    await until(
      () => status(d.url),
      (s) => s.environments.every((e) => e.synced),
      30 * 60_000,
      "for the first apply",
    );
    const firstApplyMs = Date.now() - t0;
    // a push that changed nothing (a signed webhook): every environment fetches, finds the revision applied, and does nothing
    log("[environments] no-op rounds (webhook, revision unchanged)");
    const before = boxes.map(writes);
    const noopRounds = await rounds(d.url, "webhook", quick ? 3 : 5);
    const noopCalls = boxes.map(writes).reduce((a, b, i) => a + b - before[i]!, 0);
    log("[environments] forced re-plan of all (POST /sync)");
    const forced = await rounds(d.url, "sync", quick ? 2 : 3);
    const syncCalls = boxes.map(writes).reduce((a, b, i) => a + b - before[i]!, 0);
    log("[environments] one value changed in one environment");
    const changed = names[Math.floor(count / 3)]!;
    const at = boxes.map(writes);
    rates.set(changed, 8);
    const since = new Date().toISOString();
    const t = performance.now();
    await writeFile(config, configText(g, boxes, `{ backend: sqlite, path: ${path.join(dir, "state.db")} }`, rates));
    await until(
      () => status(d.url),
      (x) => x.environments.every((e) => e.lastRun !== null && e.lastRun.startedAt >= since && e.synced),
      120_000,
      "for the value change",
    );
    const valueChangeMs = Math.round(performance.now() - t);
    const callsPerEnvironment = Object.fromEntries(names.map((n, i) => [n, writes(boxes[i]!) - at[i]!]));
    const peak = await peakRssMb(d.child.pid!);
    return {
      environments: count,
      resourcesEach: g.count,
      firstApplyMs,
      noopRound: noopRounds,
      noopCalls,
      forcedReplan: forced,
      forcedReplanCalls: syncCalls,
      valueChange: { environment: changed, wallMs: valueChangeMs, callsPerEnvironment },
      peakRssMb: Math.round(peak),
    };
  } finally {
    await stopDaemon(d);
    for (const b of boxes) await b.stop();
  }
}

/** Two replicas on PostgreSQL: the split, and how long the killed one's environments take to move. */
async function twoReplicas(dir: string, g: Generated): Promise<Record<string, unknown>> {
  const url = databaseUrl;
  const schema = `gs_bench_fleet_${process.pid}`;
  const boxes = await sandboxes(g);
  const config = path.join(dir, "fleet.yaml");
  await writeFile(config, configText(g, boxes, `{ backend: postgres, urlEnv: DATABASE_URL, schema: ${schema} }`, new Map()));
  const extra = { DATABASE_URL: url };
  const a = await spawnDaemon(config, extra);
  const b = await spawnDaemon(config, extra);
  const drop = async (): Promise<void> => {
    const c = new pg.Client({ connectionString: url });
    await c.connect();
    for (const s of [schema, ...names.map((n) => `${schema}_${n}`)]) await c.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
    await c.end();
  };
  try {
    log(`[environments] two replicas: first apply of ${count} × ${g.count} resources`);
    const t0 = Date.now();
    await until(
      () => status(a.url),
      (s) => s.environments.every((e) => e.synced || e.leader !== s.fleet?.replica) && s.environments.every((e) => e.leader !== null),
      30 * 60_000,
      "for leaders",
    );
    const split = await until(
      async () => [(await status(a.url)).fleet?.leads.length ?? 0, (await status(b.url)).fleet?.leads.length ?? 0],
      ([x, y]) => x! + y! === count && x! <= Math.ceil(count / 2) && y! <= Math.ceil(count / 2),
      60_000,
      "for the split",
    );
    await until(
      async () => [...(await status(a.url)).environments, ...(await status(b.url)).environments],
      (es) => es.every((e) => e.synced || e.lastRun?.result === "standby"),
      30 * 60_000,
      "for the first apply",
    );
    const firstApplyMs = Date.now() - t0;
    const lost = (await status(b.url)).fleet?.leads ?? [];
    log(`[environments] killing the replica that leads ${lost.length} environments`);
    b.child.kill("SIGKILL");
    const killedAt = performance.now();
    const killedAtIso = new Date().toISOString();
    await until(
      () => status(a.url),
      (s) => (s.fleet?.leads.length ?? 0) === count,
      60_000,
      "for the survivor to lead all",
    );
    const allMovedMs = Math.round(performance.now() - killedAt);
    const firstMoved = await until(
      () => status(a.url),
      (s) =>
        s.environments
          .filter((e) => lost.includes(e.environment))
          .every((e) => e.lastRun !== null && e.lastRun.startedAt >= killedAtIso && e.lastRun.result !== "standby"),
      120_000,
      "for the moved environments to run",
    );
    const ranMs = Math.round(performance.now() - killedAt);
    return {
      split,
      firstApplyMs,
      moved: lost.length,
      allLedBySurvivorMs: allMovedMs,
      movedEnvironmentsRanMs: ranMs,
      movedResults: firstMoved.environments.filter((e) => lost.includes(e.environment)).map((e) => e.lastRun?.result),
    };
  } finally {
    if (b.child.exitCode === null && b.child.signalCode === null) b.child.kill("SIGKILL");
    await stopDaemon(a);
    for (const x of boxes) await x.stop();
    await drop().catch(() => undefined);
  }
}

export async function environmentsOnly(): Promise<void> {
  const started = Date.now();
  const start = loadavg().map((l) => Math.round(l * 10) / 10);
  const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-envs-"));
  log("[environments] generating the 1,000-resource repository");
  const g = await generateRepository(path.join(dir, "repo"), 1_000, oas);
  const valueFile = await withValue(g);
  const regenerated = await withoutRefusedDocuments(g);
  log(`[environments] ${regenerated} generated documents gatesync refuses made again from other corpus documents`);
  const one = process.env.BENCH_ONE_DAEMON === "0" ? { skipped: "BENCH_ONE_DAEMON=0" } : await oneDaemon(dir, g);
  log(`[environments] one daemon: ${JSON.stringify(one)}`);
  const fleet =
    process.env.BENCH_FLEET === "0" || !(await postgresReachable()) ? { skipped: "PostgreSQL not reachable (or BENCH_FLEET=0)" } : await twoReplicas(dir, g);
  log(`[environments] two replicas: ${JSON.stringify(fleet)}`);
  const results = {
    date: new Date().toISOString(),
    parts: "environments",
    machine: { node: process.version, cores: cpus().length, quick, loadAverage: { start, end: loadavg().map((l) => Math.round(l * 10) / 10) } },
    durationSeconds: Math.round((Date.now() - started) / 1000),
    valueFile,
    regeneratedDocuments: regenerated,
    oneDaemon: one,
    twoReplicas: fleet,
  };
  await writeFile(path.join(here, "results.environments.json"), `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  await rm(dir, { recursive: true, force: true });
}
