/**
 * `npm run bench`: every performance figure beside its limit, for 1,000 and 10,000 resources.
 * Each figure is the median of several runs, with the spread (min–max). Prints a table and
 * writes bench/results.json. No timing is asserted in the test suite: this is where speed
 * and memory are measured.
 *
 *   npm run bench                 # full suite
 *   BENCH_QUICK=1 npm run bench   # fewer repetitions
 */
import { execFileSync, spawn } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { Agent } from "undici";
import { parseAllDocuments } from "yaml";
import { managementDispatcher } from "../src/apply/http-client.js";
import { runApply } from "../src/apply/run-apply.js";
import type { GatesyncConfig } from "../src/config/config.js";
import { configFromDocument } from "../src/config/config.js";
import { DaemonMetrics } from "../src/daemon/metrics.js";
import { Reconciler } from "../src/daemon/reconciler.js";
import { EnvFileSecretSource } from "../src/load/secret-refs.js";
import { silentLogger } from "../src/logger.js";
import { prepareDesired } from "../src/plan/desired.js";
import { computePlan } from "../src/plan/plan.js";
import { contentHash } from "../src/plan/sensitive.js";
import { SqliteStateBackend } from "../src/record/sqlite-backend.js";
import { PostgresStateBackend } from "../src/record/postgres-backend.js";
import { appliedRecord } from "../src/record/record.js";
import type { StateSnapshot } from "../src/record/state.js";
import { startSandbox } from "../src/sandbox/sandbox.js";
import type { SandboxHandle } from "../src/sandbox/sandbox.js";
import { GitSource } from "../src/source/git-source.js";
import { RepositoryValidator } from "../src/validate/validate-repository.js";
import { generateRepository } from "./generate.js";
import type { Generated } from "./generate.js";
import { measureSandbox } from "./sandbox-throughput.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const corpus = path.resolve(here, "../../shared/corpus/oas/3.0/pass");
const quick = process.env.BENCH_QUICK !== undefined;
const reps = quick ? 3 : 5;
const secret = "bench-secret-value-0123456789";
const env = { BENCH_SECRET: secret, GW_KEY: "bench-gw", PORTAL_KEY: "bench-portal", DASH_KEY: "bench-dash", LLM_KEY: "bench-llm", BATCH_KEY: "bench-loopback-key" };
const credentials = { gatewayKey: env.GW_KEY, portalKey: env.PORTAL_KEY, dashboardToken: env.DASH_KEY, llmKey: env.LLM_KEY };

interface Figure {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly runs: number;
}

function figure(samples: number[]): Figure {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: round(sorted[Math.floor(sorted.length / 2)]!), min: round(sorted[0]!), max: round(sorted[sorted.length - 1]!), runs: samples.length };
}

const round = (n: number): number => Math.round(n * 10) / 10;

async function repeat(n: number, fn: () => Promise<number>): Promise<Figure> {
  const samples: number[] = [];
  for (let i = 0; i < n; i++) samples.push(await fn());
  return figure(samples);
}

async function time(fn: () => Promise<unknown>): Promise<number> {
  const t = performance.now();
  await fn();
  return performance.now() - t;
}

function log(line: string): void {
  process.stderr.write(`${line}\n`);
}

// ---- 1. load and validate vs the yaml floor ------------------------------------------------

async function loadAndValidate(g: Generated): Promise<{ validate: Figure; floor: Figure }> {
  const secrets = { source: new EnvFileSecretSource(env, g.root), missing: "error" as const };
  const validate = await repeat(reps, () => time(async () => {
    const r = await new RepositoryValidator().validate({ root: g.root, secrets });
    if (r.resources.length !== g.count) throw new Error(`expected ${g.count} resources, got ${r.resources.length}: ${JSON.stringify(r.diagnostics.slice(0, 3))}`);
  }));
  const files = [...g.files, ...["petstore-expanded.yaml", "uspto.yaml", "api-with-examples.yaml", "callback-example.yaml", "link-example.yaml"].map((f) => `openapi/${f}`)];
  const floor = await repeat(reps, () => time(async () => {
    for (const f of files) for (const d of parseAllDocuments(await readFile(path.join(g.root, f), "utf8"))) d.toJS();
  }));
  return { validate, floor };
}

// ---- 2. plan ----------------------------------------------------------------------------

async function planCost(g: Generated): Promise<{ matching: Figure; onePercent: Figure }> {
  const secrets = new EnvFileSecretSource(env, g.root);
  const result = await new RepositoryValidator().validate({ root: g.root, secrets: { source: secrets, missing: "error" } });
  const hashKey = "bench-hash-key";
  const appTypeProviders = new Set<number>();
  const now = "2026-11-21T00:00:00.000Z";
  const desired = prepareDesired(result.resources, { secrets, hashKey, appTypeProviders });
  const records = new Map(desired.desired.map((d) => [d.id, appliedRecord(d, undefined, { now, quotaReset: true })]));
  const matching: StateSnapshot = { lineage: "l", serial: 1, hashKey, resources: records };
  const changed = new Map(records);
  let k = 0;
  // 1% of the records as an older commit left them: another applied request, and its hash
  for (const [id, r] of records) {
    if (k++ % 100 !== 0) continue;
    const applied = { ...r.applied, changedOutside: true };
    changed.set(id, { ...r, applied, appliedHash: contentHash(applied) });
  }
  const drifted: StateSnapshot = { ...matching, resources: changed };
  const planOnce = async (state: StateSnapshot, expectChanges: boolean): Promise<number> =>
    time(async () => {
      const d = prepareDesired(result.resources, { secrets, hashKey, appTypeProviders });
      const plan = computePlan(d.desired, state, { orphans: "report", now, batch: { maxSize: 50 } });
      if ((plan.summary.update > 0) !== expectChanges) throw new Error("unexpected plan");
      await Promise.resolve();
    });
  return { matching: await repeat(reps, () => planOnce(matching, false)), onePercent: await repeat(reps, () => planOnce(drifted, true)) };
}

// ---- 3, 4. daemon runs: full, no-op, one-file change ----------------------------------------

function benchConfig(dir: string, sandbox: SandboxHandle, gitUrl: string, rate: { concurrency: number; requestsPerSecond: number }): GatesyncConfig {
  return configFromDocument(
    {
      apiVersion: "gatesync.dev/v1",
      kind: "GatesyncConfig",
      source: { git: { url: gitUrl, branch: "main", subdirectory: "config", cacheDir: path.join(dir, "cache") } },
      targets: {
        gateway: { url: sandbox.urls.gateway, credentialEnv: "GW_KEY", batch: { listenPath: "/gw-batch/", keyEnv: "BATCH_KEY", maxSize: 50 }, rateLimit: rate },
        portal: { url: sandbox.urls.portal, credentialEnv: "PORTAL_KEY", rateLimit: rate },
        dashboard: { url: sandbox.urls.dashboard, tokenEnv: "DASH_KEY", rateLimit: rate },
        llm: { url: sandbox.urls.llm, credentialEnv: "LLM_KEY", rateLimit: rate },
      },
      state: { backend: "sqlite", path: path.join(dir, "state.db") },
      retries: { max: 4, baseDelayMs: 50, maxDelayMs: 500, timeoutMs: 30_000 },
    },
    undefined,
    dir,
  );
}

const git = (cwd: string, ...args: string[]): string => execFileSync("git", ["-c", "user.email=b@example.com", "-c", "user.name=bench", ...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

async function daemonRuns(g: Generated): Promise<{ full: Figure; noop: Figure; noopCalls: number; oneFile: Figure }> {
  const full: number[] = [];
  const noop: number[] = [];
  const oneFile: number[] = [];
  let noopCalls = 0;
  const n = quick ? 2 : 3;
  for (let rep = 0; rep < n; rep++) {
    const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-daemon-"));
    const repo = path.join(dir, "work");
    execFileSync("git", ["init", "-q", "--bare", "-b", "main", path.join(dir, "origin.git")]);
    execFileSync("git", ["clone", "-q", path.join(dir, "origin.git"), repo], { stdio: "ignore" });
    git(repo, "checkout", "-q", "-b", "main");
    await cp(path.dirname(g.root), repo, { recursive: true });
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "bench");
    git(repo, "push", "-q", "origin", "main");
    const fixtures = { ...g.fixtures, apis: [...(g.fixtures.apis ?? []), { id: "gw-loopback", listenPath: "/gw-batch/", upstream: "${sandbox}/gw/", authentication: true, batchProcessing: true }], keys: [{ key: env.BATCH_KEY, apis: ["gw-loopback"] }] };
    const sandbox = await startSandbox({ credentials, fixtures, logSize: 1000 });
    const config = benchConfig(dir, sandbox, path.join(dir, "origin.git"), { concurrency: 32, requestsPerSecond: 5000 });
    const dispatcher = managementDispatcher();
    const validator = new RepositoryValidator();
    const state = new SqliteStateBackend(path.join(dir, "state.db"));
    const reconciler = new Reconciler({ config, configHash: "bench", source: new GitSource({ url: path.join(dir, "origin.git"), branch: "main", subdirectory: "config", cacheDir: path.join(dir, "cache") }), state, validator, env, logger: silentLogger(), dispatcher, metrics: new DaemonMetrics() });
    const first = await reconciler.runOnce("start");
    if (first.result !== "applied") throw new Error(`full run: ${first.result} ${first.error ?? JSON.stringify(first.summary?.failed.slice(0, 3))}`);
    full.push(first.durationMs);
    const callsBefore = sandbox.inspect.calls().log.length;
    const again = await reconciler.runOnce("schedule");
    if (again.result !== "noop") throw new Error(`no-op run: ${again.result}`);
    noop.push(again.durationMs);
    noopCalls += sandbox.inspect.calls().log.length - callsBefore;
    // one file changes: ten org keys get a new rate
    const target = g.files.find((f) => f.startsWith("orgkey/"))!;
    const file = path.join(repo, "config", target);
    await writeFile(file, (await readFile(file, "utf8")).replace(/rate: (\d+)/g, (_m, r: string) => `rate: ${Number(r) + 1}`));
    git(repo, "commit", "-q", "-am", "one file");
    git(repo, "push", "-q", "origin", "main");
    const changed = await reconciler.runOnce("webhook");
    if (changed.result !== "applied" || changed.summary?.applied.length !== 10) throw new Error(`one-file run: ${changed.result} ${changed.summary?.applied.length}`);
    oneFile.push(changed.durationMs);
    await reconciler.stop();
    await state.close();
    await dispatcher.close();
    await sandbox.stop();
    await rm(dir, { recursive: true, force: true });
  }
  return { full: figure(full), noop: figure(noop), noopCalls, oneFile: figure(oneFile) };
}

// ---- 5. apply 1,000 gateway changes under a rate limit -------------------------------------

/** PostgreSQL for the shared-state variant; the bench says so and goes on when it is down. */
const databaseUrl = process.env.GATESYNC_BENCH_DATABASE_URL ?? "postgresql://postgres@127.0.0.1:5432/test";

/** One short-lived connection for `work`. */
async function withPostgres<T>(work: (client: pg.Client) => Promise<T>): Promise<T> {
  const client = new pg.Client({ connectionString: databaseUrl, connectionTimeoutMillis: 2000 });
  try {
    await client.connect();
    return await work(client);
  } finally {
    await client.end().catch(() => undefined);
  }
}

const postgresReachable = (): Promise<boolean> => withPostgres(async () => Promise.resolve(true)).catch(() => false);
const dropSchema = (schema: string): Promise<unknown> => withPostgres((c) => c.query(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(schema)} CASCADE`));

async function applyUnderRateLimit(batch: boolean, count: number, backend: "sqlite" | "postgres" = "sqlite"): Promise<{ seconds: Figure; calls: number }> {
  const samples: number[] = [];
  let calls = 0;
  const n = batch ? reps : quick ? 1 : 2;
  for (let rep = 0; rep < n; rep++) {
    const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-apply-"));
    const files: string[] = [];
    for (let i = 0; i < count; i++) files.push(`apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: key-${i} }\nspec: { keyId: key-${i}, rate: ${i}, per: 60 }\n`);
    await writeFile(path.join(dir, "keys.yaml"), files.join("---\n"));
    const sandbox = await startSandbox({
      credentials,
      fixtures: { apis: [{ id: "gw-loopback", listenPath: "/gw-batch/", upstream: "${sandbox}/gw/", authentication: true, batchProcessing: true }], keys: [{ key: env.BATCH_KEY, apis: ["gw-loopback"] }] },
      faults: { latencyMs: 5, rateLimit: { requestsPerSecond: 100, burst: 10 }, interfaces: ["gateway"] },
      logSize: 100,
    });
    const base = benchConfig(dir, sandbox, "", { concurrency: 8, requestsPerSecond: 100 });
    const gateway = base.targets.gateway!;
    const config: GatesyncConfig = {
      ...base,
      source: { type: "directory", directory: dir, watch: false },
      targets: { gateway: batch ? gateway : { url: gateway.url, credentialEnv: gateway.credentialEnv, rateLimit: gateway.rateLimit } },
    };
    const dispatcher = new Agent({ keepAliveTimeout: 30_000 });
    const schema = `gatesync_bench_${process.pid}_${rep}`;
    const state = backend === "sqlite" ? new SqliteStateBackend(path.join(dir, "state.db")) : new PostgresStateBackend({ url: databaseUrl, schema });
    const t = performance.now();
    const r = await runApply({ config, root: dir, validator: new RepositoryValidator(), state, env, logger: silentLogger(), dispatcher });
    // the executor's own time: load and plan are measured elsewhere
    const seconds = "summary" in r ? r.summary.durationMs / 1000 : (performance.now() - t) / 1000;
    if (!("summary" in r) || r.summary.applied.length !== count) throw new Error(`apply: ${JSON.stringify("summary" in r ? r.summary.failed.slice(0, 2) : r)}`);
    samples.push(seconds);
    calls = r.summary.calls.gateway;
    await state.close();
    if (backend === "postgres") await dropSchema(schema);
    await dispatcher.close();
    await sandbox.stop();
    await rm(dir, { recursive: true, force: true });
  }
  return { seconds: figure(samples), calls };
}

// ---- 6. peak memory ------------------------------------------------------------------------

async function peakRss(root: string): Promise<Figure> {
  // the compiled code, as production runs it (npm run bench builds first); a fresh process each
  // time, since the peak depends on when the collector runs
  const probe = path.join(here, "memory-probe.mjs");
  const samples: number[] = [];
  for (let rep = 0; rep < (quick ? 1 : 3); rep++) {
    const out = await new Promise<string>((resolve, reject) => {
      const child = spawn(process.execPath, [probe, root], { env: { ...process.env, ...env }, stdio: ["ignore", "pipe", "inherit"] });
      let text = "";
      child.stdout.on("data", (b: Buffer) => (text += b.toString()));
      child.on("close", (code) => (code === 0 ? resolve(text) : reject(new Error(`memory probe exited ${code}`))));
    });
    samples.push((JSON.parse(out) as { peakRssMb: number }).peakRssMb);
  }
  return figure(samples);
}

// ---- the suite -----------------------------------------------------------------------------

interface SizeResult {
  readonly loadValidate: { readonly validate: Figure; readonly floor: Figure };
  readonly plan: { readonly matching: Figure; readonly onePercent: Figure };
  readonly daemon: { readonly full: Figure; readonly noop: Figure; readonly noopCalls: number; readonly oneFile: Figure };
  readonly peakRssMb: Figure;
}

interface Row {
  readonly figure: string;
  readonly at1k: string;
  readonly at10k: string;
  readonly target: string;
  readonly met: boolean | undefined;
}

const show = (f: Figure, unit = "ms"): string => `${f.median} ${unit} (${f.min}–${f.max})`;

async function main(): Promise<void> {
  const started = Date.now();
  const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-"));
  const sizes = [1_000, 10_000];
  const repos = new Map<number, Generated>();
  for (const n of sizes) repos.set(n, await generateRepository(path.join(dir, String(n)), n, corpus));
  const results: Record<string, unknown> = {};
  const perSize: Record<number, SizeResult> = {};
  for (const n of sizes) {
    const g = repos.get(n)!;
    log(`[${n}] load and validate`);
    const lv = await loadAndValidate(g);
    log(`[${n}] plan`);
    const plan = await planCost(g);
    log(`[${n}] daemon runs (full, no-op, one-file change)`);
    const daemon = await daemonRuns(g);
    log(`[${n}] peak memory`);
    const rss = await peakRss(g.root);
    perSize[n] = { loadValidate: lv, plan, daemon, peakRssMb: rss };
  }
  log("apply 1,000 gateway changes at 100 requests/s, 5 ms latency");
  const batched = await applyUnderRateLimit(true, 1000);
  const direct = await applyUnderRateLimit(false, 1000);
  log("the same batched apply, recording into the PostgreSQL state");
  const shared = (await postgresReachable()) ? await applyUnderRateLimit(true, 1000, "postgres") : undefined;
  if (shared === undefined) log(`PostgreSQL is not reachable at ${databaseUrl}: that row is left out`);
  log("sandbox throughput");
  const sandbox = await measureSandbox(quick ? 2 : 4);
  results.sizes = perSize;
  results.apply = { batched, direct, ...(shared === undefined ? {} : { batchedPostgres: shared }), boundBatchedSeconds: 1000 / 50 / 100, boundDirectSeconds: 1000 / 100 };
  results.sandbox = sandbox;

  const at = (n: number): SizeResult => perSize[n]!;
  const fixed = (n: number, digits: number): number => Number(n.toFixed(digits));
  const ratio = (n: number): number => fixed(at(n).loadValidate.validate.median / at(n).loadValidate.floor.median, 2);
  const planShare = (n: number, k: "matching" | "onePercent"): number => fixed((at(n).plan[k].median / at(n).loadValidate.validate.median) * 100, 1);
  const oneFileShare = (n: number): number => fixed((at(n).daemon.oneFile.median / at(n).daemon.full.median) * 100, 1);
  const bound = 1000 / 50 / 100;
  const rows: Row[] = [
    { figure: "1. load+validate", at1k: show(at(1000).loadValidate.validate), at10k: show(at(10000).loadValidate.validate), target: "", met: undefined },
    { figure: "   yaml-only floor", at1k: show(at(1000).loadValidate.floor), at10k: show(at(10000).loadValidate.floor), target: "", met: undefined },
    { figure: "   ratio to the floor", at1k: `${ratio(1000)}×`, at10k: `${ratio(10000)}×`, target: "≤ 1.5×", met: ratio(10000) <= 1.5 },
    { figure: "2. plan, state matches", at1k: `${show(at(1000).plan.matching)} = ${planShare(1000, "matching")}%`, at10k: `${show(at(10000).plan.matching)} = ${planShare(10000, "matching")}%`, target: "≤ 20% of load+validate", met: planShare(10000, "matching") <= 20 },
    { figure: "   plan, 1% changed", at1k: `${show(at(1000).plan.onePercent)} = ${planShare(1000, "onePercent")}%`, at10k: `${show(at(10000).plan.onePercent)} = ${planShare(10000, "onePercent")}%`, target: "≤ 20% of load+validate", met: planShare(10000, "onePercent") <= 20 },
    { figure: "3. no-op daemon run", at1k: `${show(at(1000).daemon.noop)}, ${at(1000).daemon.noopCalls} calls`, at10k: `${show(at(10000).daemon.noop)}, ${at(10000).daemon.noopCalls} calls`, target: "< 50 ms, 0 calls", met: at(10000).daemon.noop.median < 50 && at(10000).daemon.noopCalls === 0 },
    { figure: "   full daemon run (apply all)", at1k: show(at(1000).daemon.full), at10k: show(at(10000).daemon.full), target: "", met: undefined },
    { figure: "4. one-file change run", at1k: `${show(at(1000).daemon.oneFile)} = ${oneFileShare(1000)}%`, at10k: `${show(at(10000).daemon.oneFile)} = ${oneFileShare(10000)}%`, target: "< 10% of a full run", met: oneFileShare(10000) < 10 },
    { figure: "5. apply 1,000 changes, batched", at1k: "", at10k: `${show(batched.seconds, "s")}, ${batched.calls} calls`, target: `≤ 1.2 × ${bound} s bound`, met: batched.seconds.median <= 1.2 * bound },
    ...(shared === undefined
      ? []
      : [{ figure: "   batched, PostgreSQL state", at1k: "", at10k: `${show(shared.seconds, "s")}, ${shared.calls} calls`, target: `≤ 1.2 × ${bound} s bound`, met: shared.seconds.median <= 1.2 * bound }]),
    { figure: "   apply 1,000 changes, direct", at1k: "", at10k: `${show(direct.seconds, "s")}, ${direct.calls} calls`, target: "batched ≥ 10× faster", met: direct.seconds.median >= 10 * batched.seconds.median },
    { figure: "6. peak RSS (load+validate+plan)", at1k: show(at(1000).peakRssMb, "MB"), at10k: show(at(10000).peakRssMb, "MB"), target: "< 250 MB", met: at(10000).peakRssMb.median < 250 },
    ...sandbox.results.map((r, i) => ({ figure: `${i === 0 ? "7. " : "   "}sandbox: ${r.operation}`, at1k: "", at10k: `${r.managementCallsPerSecond} calls/s (p99 ${r.latencyP99Ms} ms)`, target: "≫ 100 calls/s", met: r.managementCallsPerSecond > 1000 })),
  ];
  results.table = rows;
  results.date = new Date().toISOString();
  results.machine = { node: process.version, cores: (await import("node:os")).cpus().length, quick };
  const durationSeconds = Math.round((Date.now() - started) / 1000);
  results.durationSeconds = durationSeconds;
  const width = [34, 34, 40, 24];
  const line = (cells: string[]): string => cells.map((c, i) => c.padEnd(width[i] ?? 10)).join(" ");
  process.stdout.write(`${line(["figure", "1,000 resources", "10,000 resources", "target"])} met\n`);
  for (const r of rows) process.stdout.write(`${line([r.figure, r.at1k, r.at10k, r.target])} ${r.met === undefined ? "" : r.met ? "yes" : "NO"}\n`);
  process.stdout.write(`\n(median of ${reps} runs unless noted; spread min–max; ${durationSeconds} s in all)\n`);
  await writeFile(path.join(here, "results.json"), `${JSON.stringify(results, null, 2)}\n`);
  await rm(dir, { recursive: true, force: true });
}

await main();
