/**
 * `npm run bench`: every performance figure beside its limit, on generated repositories where
 * every API has its own OpenAPI document (one labelled row keeps the old case of five shared
 * documents). In-process figures at 1,000 and 10,000 resources; whole-process (cold, spawned)
 * figures at 10,000 against a 10,000-record state; growth to 100,000. Each figure is the median
 * of several runs, with the spread (min–max), all from this one run. Prints a table and writes
 * bench/results.json. No timing is asserted in the test suite: this is where speed and memory
 * are measured.
 *
 *   npm run bench                 # full suite
 *   BENCH_QUICK=1 npm run bench   # fewer repetitions
 *   BENCH_100K=0 npm run bench    # without the 100,000-resource part
 *   BENCH_SCALE_REPS=1 npm run bench   # one run per command in the growth part (default 3)
 *   BENCH_PARTS=rules npm run bench    # only the governance rules' row (cold validate with and without rulesets)
 *   BENCH_PARTS=startup npm run bench  # only start-up and small repositories, to `node -e 0`, 15 interleaved runs (bench/startup.ts; its own table; BENCH_STARTUP_RUNS)
 *   BENCH_PARTS=shapes npm run bench   # only cold validate and first plan of 10,000 resources in five shapes, each to its floor (bench/shapes.ts; its own table)
 *   BENCH_PARTS=webhook npm run bench  # only commit → applied through the daemon's git webhook, 20 commits (bench/webhook-latency.ts; its own table)
 *   BENCH_PARTS=environments npm run bench   # 20 environments of 1,000 resources in one daemon, and two replicas (bench/environments.ts; BENCH_ONE_DAEMON=0, BENCH_FLEET=0 skip either)
 *   BENCH_PARTS=history npm run bench  # a daemon of 20 environments with each history empty and at its bound, no-op rounds alternated (bench/history.ts)
 *   BENCH_PARTS=failover npm run bench # two replicas on PostgreSQL: signal to the other leading and to the next commit applied, after SIGKILL, SIGSTOP, SIGTERM (bench/failover.ts)
 *   BENCH_PARTS=fleet-scale npm run bench # 3 replicas on one PostgreSQL at 50, 200, 500 environments: connections, first sync, no-op round, SIGKILL → led and applied, RSS (bench/fleet-scale.ts; BENCH_FLEET_SIZES)
 *   BENCH_PARTS=scale npm run bench    # only the 10,000 and 100,000 rows: in-process plan and peak RSS at 10,000, growth to 100,000
 *   BENCH_PARTS=import npm run bench   # only gatesync import of 10,000 objects against validate of what it wrote (bench/import.ts; its own table)
 *   BENCH_PARTS=sops npm run bench     # only what 1,000 ${sops:} references across 50 SOPS files add to a plan (bench/sops.ts; its own table)
 *   BENCH_PARTS=bounds npm run bench   # only inputs bounded before work: validate with `!!str` keys to without, a daemon's /healthz beside four 36,000-stanza SOPS files (bench/bounds.ts)
 *   BENCH_PARTS=package-install npm run bench   # only the packed tarball's install against one small CLI's, from npm's cache, as a ratio (bench/package-install.ts)
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { applyUnderRateLimit, databaseUrl, postgresReachable } from "./apply-rate.js";
import { coldFigures, seedState, writeBenchConfig } from "./cold.js";
import { env, loadNow, log, machineOf, quick, reps, resultsHead } from "./common.js";
import { daemonRuns } from "./daemon-runs.js";
import { generateRepository } from "./generate.js";
import type { Generated } from "./generate.js";
import { environmentsOnly } from "./environments.js";
import { failoverOnly } from "./failover.js";
import { fleetScaleOnly } from "./fleet-scale.js";
import { historyOnly } from "./history.js";
import { loadAndValidate, peakRss, planCost } from "./in-process.js";
import { measureSandbox } from "./sandbox-throughput.js";
import { scaleFigures } from "./scale.js";
import type { ScaleFigures } from "./scale.js";
import { publishTable, startupFooter, startupResultsPath } from "./publish-table.js";
import { rulesFigures } from "./rules.js";
import { startupFigures } from "./startup.js";
import { startupTable } from "./startup-table.js";
import { shapesOnly } from "./shapes.js";
import { webhookOnly } from "./webhook-latency.js";
import { sopsOnly } from "./sops.js";
import { importOnly } from "./import.js";
import { boundsOnly } from "./bounds.js";
import { packageInstallOnly } from "./package-install.js";
import { buildRows, coldRows, renderTable, rulesRows, scaleRows, tableFooter } from "./table.js";
import type { SizeResult } from "./table.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const oas = path.resolve(here, "../test/fixtures/shared/corpus/oas");
const with100k = process.env.BENCH_100K !== "0";

/**
 * `BENCH_PARTS=cold`: only the whole-process figures at 10,000 resources (floor, validate, plan
 * against a 10,000-record state) — what a loaded machine can still measure in minutes.
 */
async function coldOnly(): Promise<void> {
  const started = Date.now();
  const start = loadNow();
  const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-"));
  log("[10000] generating (every API its own OpenAPI document)");
  const g = await generateRepository(path.join(dir, "10000"), 10_000, oas);
  const stateDir = path.join(dir, "cold-state");
  await mkdir(stateDir, { recursive: true });
  const offline = "http://127.0.0.1:9/";
  const config = await writeBenchConfig(stateDir, { gateway: offline, portal: offline, dashboard: offline, llm: offline });
  const records = await seedState(config, g, env);
  log("[10000] whole process, cold: yaml floor, validate, plan --dir against a 10,000-record state");
  const cold = await coldFigures(g, quick ? 3 : 5, env, config);
  const rows = coldRows(cold, records);
  const head = resultsHead("cold", start, started);
  const { durationSeconds, machine } = head;
  process.stdout.write(
    renderTable(
      rows,
      `(cold part only; median of ${cold.floor.wallMs.runs} runs; spread min–max; ${durationSeconds} s; load average ${start.join(" ")} → ${machine.loadAverage.end.join(" ")})`,
    ),
  );
  const results = {
    ...head,
    cold: { resources: 10_000, stateRecords: records, ...cold },
    table: rows,
  };
  await writeFile(path.join(here, "results.cold.json"), `${JSON.stringify(results, null, 2)}\n`);
  await rm(dir, { recursive: true, force: true });
}

/** `BENCH_PARTS=rules`: cold validate at 10,000 resources with and without the rulesets of bench/rules.ts, interleaved. */
async function rulesOnly(): Promise<void> {
  const started = Date.now();
  const start = loadNow();
  const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-"));
  log("[10000] generating (every API its own OpenAPI document)");
  const g = await generateRepository(path.join(dir, "10000"), 10_000, oas);
  log("[10000] cold validate, without and with rules");
  const rules = await rulesFigures(g, dir, quick ? 3 : 5, env);
  const rows = rulesRows(rules);
  const head = resultsHead("rules", start, started);
  const { durationSeconds, machine } = head;
  process.stdout.write(
    renderTable(
      rows,
      `(rules part only; median of ${rules.with.wallMs.runs} runs; spread min–max; ${durationSeconds} s; load average ${start.join(" ")} → ${machine.loadAverage.end.join(" ")})`,
    ),
  );
  const results = {
    ...head,
    rules,
    table: rows,
  };
  await writeFile(path.join(here, "results.rules.json"), `${JSON.stringify(results, null, 2)}\n`);
  await rm(dir, { recursive: true, force: true });
}

/** `BENCH_PARTS=startup`: small repositories and start-up, whole processes to `node -e 0` (bench/startup.ts); writes bench/results.startup.json. */
async function startupOnly(): Promise<void> {
  const started = Date.now();
  const start = loadNow();
  // one paired run of 15 (issue #60's measure); BENCH_STARTUP_RUNS for another count
  const startup = await startupFigures(Number(process.env.BENCH_STARTUP_RUNS ?? (quick ? 3 : 15)));
  const results = {
    ...resultsHead("startup", start, started),
    startup,
  };
  process.stdout.write(startupTable(startup, startupFooter(results)));
  await writeFile(startupResultsPath, `${JSON.stringify(results, null, 2)}\n`);
  await publishTable();
}

/**
 * `BENCH_PARTS=scale`: the figures a change to what is held in memory moves — at 10,000 resources
 * the in-process plan and the peak RSS of load + validate + plan, then the growth rows (cold
 * validate, first plan, first apply inside the manifest's 512 MiB) at 10,000 and 100,000.
 */
async function scaleOnly(): Promise<void> {
  const started = Date.now();
  const start = loadNow();
  const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-"));
  log("[10000] generating (every API its own OpenAPI document)");
  const g10k = await generateRepository(path.join(dir, "10000"), 10_000, oas);
  log("[10000] plan, in process");
  const plan = await planCost(g10k);
  log("[10000] peak memory, in one process");
  const peakRssMb = await peakRss(g10k.root);
  const scale: ScaleFigures[] = [await scaleFigures(g10k, path.join(dir, "scale-10k"))];
  await rm(path.join(dir, "10000"), { recursive: true, force: true });
  log("[100000] generating");
  const g100k = await generateRepository(path.join(dir, "100000"), 100_000, oas);
  scale.push(await scaleFigures(g100k, path.join(dir, "scale-100k")));
  const rows = scaleRows(scale);
  const head = resultsHead("scale", start, started);
  const { durationSeconds, machine } = head;
  const inProcess = `at 10,000 in process: plan ${plan.matching.median} ms (state matches), ${plan.onePercent.median} ms (1% changed); peak RSS ${peakRssMb.median} MB`;
  process.stdout.write(
    renderTable(rows, `(scale part only; ${inProcess}; ${durationSeconds} s; load average ${start.join(" ")} → ${machine.loadAverage.end.join(" ")})`),
  );
  const results = {
    ...head,
    plan10k: plan,
    peakRssMb10k: peakRssMb,
    scale,
    table: rows,
  };
  await writeFile(path.join(here, "results.scale.json"), `${JSON.stringify(results, null, 2)}\n`);
  await rm(dir, { recursive: true, force: true });
}

/** Partial results, written after each section (a long run that is cut short keeps what it measured). */
const partial: Record<string, unknown> = { complete: false };
async function save(key: string, value: unknown): Promise<void> {
  partial[key] = value;
  await writeFile(path.join(here, "results.partial.json"), `${JSON.stringify(partial, null, 2)}\n`);
}

async function main(): Promise<void> {
  const started = Date.now();
  const load = { start: loadNow() };
  const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-"));
  const perSize: Record<number, SizeResult> = {};
  const repos = new Map<number, Generated>();
  for (const n of [1_000, 10_000]) {
    log(`[${n}] generating (every API its own OpenAPI document)`);
    const g = await generateRepository(path.join(dir, String(n)), n, oas);
    repos.set(n, g);
    log(`[${n}] load and validate`);
    const lv = await loadAndValidate(g);
    log(`[${n}] plan`);
    const plan = await planCost(g);
    log(`[${n}] daemon runs (full, no-op, one-file change)`);
    const daemon = await daemonRuns(g);
    log(`[${n}] peak memory`);
    perSize[n] = { loadValidate: lv, plan, daemon, peakRssMb: await peakRss(g.root) };
    await save("sizes", perSize);
  }
  log("[10000] five documents shared by all APIs (the old case)");
  const sharedDocs = await loadAndValidate(await generateRepository(path.join(dir, "shared"), 10_000, oas, "shared"));
  await save("sharedDocuments10k", sharedDocs);

  log("[10000] whole process, cold: yaml floor, validate, plan --dir against a 10,000-record state");
  const g10k = repos.get(10_000)!;
  const stateDir = path.join(dir, "cold-state");
  await mkdir(stateDir, { recursive: true });
  const offline = "http://127.0.0.1:9/";
  const config = await writeBenchConfig(stateDir, { gateway: offline, portal: offline, dashboard: offline, llm: offline });
  const records = await seedState(config, g10k, env);
  const cold = await coldFigures(g10k, quick ? 3 : 5, env, config);
  await save("cold", { resources: 10_000, stateRecords: records, ...cold });
  log("[10000] governance rules: cold validate with and without rulesets");
  const rulesDir = path.join(dir, "rules");
  await mkdir(rulesDir, { recursive: true });
  const rules = await rulesFigures(g10k, rulesDir, quick ? 3 : 5, env);
  await save("rules", rules);

  log("apply 1,000 gateway changes at 100 requests/s, 5 ms latency");
  const batched = await applyUnderRateLimit(true, 1000);
  const direct = await applyUnderRateLimit(false, 1000);
  log("the same batched apply, recording into the PostgreSQL state");
  const shared = (await postgresReachable()) ? await applyUnderRateLimit(true, 1000, "postgres") : undefined;
  await save("apply", { batched, direct, ...(shared === undefined ? {} : { batchedPostgres: shared }) });
  if (shared === undefined) log(`PostgreSQL is not reachable at ${databaseUrl}: that row is left out`);
  log("sandbox throughput");
  const sandbox = await measureSandbox(quick ? 2 : 4);

  await save("sandbox", sandbox);

  const scale: ScaleFigures[] = [];
  if (with100k) {
    scale.push(await scaleFigures(g10k, path.join(dir, "scale-10k")));
    await save("scale", scale);
    for (const n of [1_000, 10_000]) await rm(path.join(dir, String(n)), { recursive: true, force: true });
    log("[100000] generating");
    const g100k = await generateRepository(path.join(dir, "100000"), 100_000, oas);
    scale.push(await scaleFigures(g100k, path.join(dir, "scale-100k")));
    await save("scale", scale);
  }

  const apply = {
    batched,
    direct,
    ...(shared === undefined ? {} : { batchedPostgres: shared }),
    boundBatchedSeconds: 1000 / 50 / 100,
    boundDirectSeconds: 1000 / 100,
  };
  const rows = buildRows({ perSize, sharedDocs, cold, coldStateRecords: records, scale, apply, sandbox, rules });
  const durationSeconds = Math.round((Date.now() - started) / 1000);
  const results = {
    date: new Date().toISOString(),
    machine: machineOf(load.start),
    durationSeconds,
    sizes: perSize,
    sharedDocuments10k: sharedDocs,
    cold: { resources: 10_000, stateRecords: records, ...cold },
    rules,
    scale,
    apply,
    sandbox,
    table: rows,
  };
  process.stdout.write(renderTable(rows, tableFooter(results, reps)));
  await writeFile(path.join(here, "results.json"), `${JSON.stringify(results, null, 2)}\n`);
  await publishTable();
  await rm(path.join(here, "results.partial.json"), { force: true });
  await rm(dir, { recursive: true, force: true });
}

const parts: Record<string, () => Promise<void>> = {
  cold: coldOnly,
  rules: rulesOnly,
  startup: startupOnly,
  environments: environmentsOnly,
  failover: failoverOnly,
  "fleet-scale": fleetScaleOnly,
  history: historyOnly,
  scale: scaleOnly,
  webhook: webhookOnly,
  shapes: shapesOnly,
  sops: sopsOnly,
  import: importOnly,
  bounds: boundsOnly,
  "package-install": packageInstallOnly,
};
await (parts[process.env.BENCH_PARTS ?? ""] ?? main)();
