/**
 * `BENCH_PARTS=environments`: 20 environments of the realistic 1,000-resource repository in one
 * `gatesync run` (a spawned process with the manifest's NODE_OPTIONS; one sandbox per
 * environment, in this process): the first apply of all of them, a no-op reconcile of all of
 * them (time and calls), a forced re-plan of all of them (`POST /sync`) against each alone one
 * after another, a commit for all while one sandbox answers in 5 s (environments-side-by-side.ts),
 * a one-value change in one environment (calls at each sandbox), and the daemon's peak RSS
 * against the manifest's limit. Then two replicas on
 * PostgreSQL: how the environments split, and how long an environment takes to move to the
 * survivor after its leader is killed (SIGKILL). Writes bench/results.environments.json.
 */
import { spawn } from "node:child_process";
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { availableParallelism, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import type { SandboxHandle } from "../src/sandbox/sandbox.js";
import { databaseUrl, postgresReachable } from "./apply-rate.js";
import { cli } from "./cold.js";
import { env, loadNow, log, quick, resultsHead } from "./common.js";
import { configText, count, names, peakRssMb, rounds, sandboxes, spawnDaemon, status, stopDaemon, until, writes } from "./environments-daemon.js";
import type { Daemon } from "./environments-daemon.js";
import { replanAllVersusEach, slowNeighbour } from "./environments-side-by-side.js";
import { generateRepository } from "./generate.js";
import type { Generated } from "./generate.js";
import { manifestMemory } from "./memory-limit.js";
import { loadCorpus, openApiVariant } from "./openapi-variants.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const oas = path.resolve(here, "../test/fixtures/shared/corpus/oas");

/**
 * The generated documents gatesync refuses (today one corpus document, every 13th API, declares
 * neither its `{id}` path parameter nor its security scheme) are generated again from the rest of
 * the corpus: every environment must apply the whole repository.
 */
export async function withoutRefusedDocuments(g: Generated): Promise<number> {
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

/** One value changed in one environment (gatesync.yaml reloaded): the wall time, and the calls at each sandbox. */
async function valueChange(
  d: Daemon,
  boxes: readonly SandboxHandle[],
  write: (rates: ReadonlyMap<string, number>) => Promise<void>,
): Promise<Record<string, unknown>> {
  log("[environments] one value changed in one environment");
  const changed = names[Math.floor(count / 3)]!;
  const at = boxes.map(writes);
  const rates = new Map(names.map((n) => [n, n === changed ? 8 : 7]));
  const since = new Date().toISOString();
  const t = performance.now();
  await write(rates);
  await until(
    () => status(d.url),
    (x) => x.environments.every((e) => e.lastRun !== null && e.lastRun.startedAt >= since && e.synced),
    120_000,
    "for the value change",
  );
  const wallMs = Math.round(performance.now() - t);
  return { environment: changed, wallMs, callsPerEnvironment: Object.fromEntries(names.map((n, i) => [n, writes(boxes[i]!) - at[i]!])) };
}

/** The rounds of one running daemon: no-op, forced re-plans (all, and each alone), a slow neighbour, one value changed. */
async function daemonRounds(
  d: Daemon,
  boxes: readonly SandboxHandle[],
  g: Generated,
  write: (rates: ReadonlyMap<string, number>) => Promise<void>,
): Promise<Record<string, unknown>> {
  // a push that changed nothing (a signed webhook): every environment fetches, finds the revision applied, and does nothing
  log("[environments] no-op rounds (webhook, revision unchanged)");
  const before = boxes.map(writes);
  const noopRound = await rounds(d.url, "webhook", quick ? 3 : 5);
  const noopCalls = boxes.map(writes).reduce((a, b, i) => a + b - before[i]!, 0);
  log("[environments] forced re-plan of all (POST /sync)");
  const forcedReplan = await rounds(d.url, "sync", quick ? 2 : 3);
  const forcedReplanCalls = boxes.map(writes).reduce((a, b, i) => a + b - before[i]!, 0);
  const replanAllVersusEachAlone = await replanAllVersusEach(d.url, quick ? 2 : 3);
  const slowSandbox = await slowNeighbour(d.url, boxes, g, quick ? 2 : 3);
  const value = await valueChange(d, boxes, write);
  return { noopRound, noopCalls, forcedReplan, forcedReplanCalls, replanAllVersusEachAlone, slowSandbox, valueChange: value };
}

/** One daemon, SQLite states: first apply, the rounds, peak RSS. */
async function oneDaemon(dir: string, g: Generated): Promise<Record<string, unknown>> {
  const boxes = await sandboxes(g);
  const config = path.join(dir, "gatesync.yaml");
  const write = async (rates: ReadonlyMap<string, number>): Promise<void> =>
    writeFile(config, configText(g, boxes, `{ backend: sqlite, path: ${path.join(dir, "state.db")} }`, rates));
  await write(new Map(names.map((n) => [n, 7])));
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
    const measured = await daemonRounds(d, boxes, g, write);
    const peak = await peakRssMb(d.child.pid!);
    return {
      environments: count,
      resourcesEach: g.count,
      concurrentEnvironments: availableParallelism(),
      firstApplyMs,
      ...measured,
      peakRssMb: Math.round(peak),
      limitMiB: manifestMemory().limitMiB,
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
  const start = loadNow();
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
    ...resultsHead("environments", start, started),
    valueFile,
    regeneratedDocuments: regenerated,
    oneDaemon: one,
    twoReplicas: fleet,
  };
  await writeFile(path.join(here, "results.environments.json"), `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  await rm(dir, { recursive: true, force: true });
}
