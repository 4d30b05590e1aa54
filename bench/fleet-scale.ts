/**
 * `BENCH_PARTS=fleet-scale`: a fleet of 3 replicas of `gatesync run` (the built CLI) on one
 * PostgreSQL, at 50, 200 and 500 environments (BENCH_FLEET_SIZES), each a small repository's two
 * org keys at one sandbox (their ids from the environment's values). Per size: the peak of the
 * replicas' database sessions (sampled every 100 ms through a role of their own), the time to the
 * first sync of every environment, a no-op round's wall time (POST /sync at one replica, forwarded
 * to the leaders, to every environment's next `run finished`), SIGKILL of one replica with a new
 * commit written at the same moment → every one of its environments led by another and the commit
 * applied there, and each replica's peak RSS. Writes bench/results.fleet-scale.json.
 */
import { spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { startSandbox } from "../src/sandbox/sandbox.js";
import { PostgresOwnership, ownershipSchema } from "../src/record/ownership/postgres-ownership.js";
import { PostgresStateBackend } from "../src/record/postgres/postgres-backend.js";
import { databaseUrl, postgresReachable } from "./apply-rate.js";
import { cli } from "./cold.js";
import { credentials, env, loadNow, log, resultsHead } from "./common.js";
import { peakRssMb, until } from "./environments-daemon.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const sizes = (process.env.BENCH_FLEET_SIZES ?? "50,200,500").split(",").map(Number);
const replicaCount = 3;
const poolSize = 4;
/** `limits.concurrentEnvironments` of each replica (BENCH_FLEET_RUNS; unset: gatesync's default, the machine's CPUs). */
const runsAtOnce = process.env.BENCH_FLEET_RUNS === undefined ? undefined : Number(process.env.BENCH_FLEET_RUNS);
const role = "gs_bench_fleet";
const syncToken = "bench-sync-token";

interface Replica {
  readonly name: string;
  readonly child: ChildProcess;
  url: string | undefined;
  finished: Map<string, number>;
  tail: string;
}

const keys = (rate: number): string =>
  [0, 1].map((i) => `apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: k${i} }\nspec:\n  keyId: \${var:p}-k${i}\n  rate: ${rate}\n`).join("---\n");

function roleUrl(): string {
  const u = new URL(databaseUrl);
  u.username = role;
  u.password = "";
  return u.toString();
}

async function admin<T extends pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const c = new pg.Client({ connectionString: databaseUrl });
  await c.connect();
  try {
    return (await c.query<T>(text, values)).rows;
  } finally {
    await c.end();
  }
}

/** A replica; every `run finished` line's environment and when it was read. */
function spawnReplica(name: string, config: string): Replica {
  const child = spawn(process.execPath, [cli, "run", "--config", config], {
    env: { ...process.env, ...env, DATABASE_URL: roleUrl(), SYNC_TOKEN: syncToken, GATESYNC_LOG_LEVEL: "info", GATESYNC_LOG_FORMAT: "json" },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const r: Replica = { name, child, url: undefined, finished: new Map(), tail: "" };
  let rest = "";
  const take = (b: Buffer): void => {
    r.tail = (r.tail + b.toString()).slice(-4000);
    const lines = (rest + b.toString()).split("\n");
    rest = lines.pop() ?? "";
    for (const l of lines) {
      r.url ??= /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(l)?.[1];
      if (l.includes('"msg":"run finished"')) {
        const e = /"environment":"([^"]+)"/.exec(l)?.[1];
        if (e !== undefined) r.finished.set(e, performance.now());
      }
    }
  };
  child.stdout.on("data", take);
  child.stderr.on("data", take);
  return r;
}

const gone = (r: Replica): Promise<void> =>
  r.child.exitCode !== null || r.child.signalCode !== null ? Promise.resolve() : new Promise((resolve) => r.child.once("close", () => resolve()));

async function leaders(schema: string): Promise<Map<string, string | null>> {
  const rows = await admin<{ environment: string; holder: string | null }>(
    `SELECT environment, CASE WHEN expires_at > now() THEN holder_name END AS holder FROM ${schema}.fleet_leases`,
  );
  return new Map(rows.map((r) => [r.environment, r.holder]));
}

async function oneSize(n: number): Promise<Record<string, unknown>> {
  const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-fleet-"));
  const schema = `gs_bench_fleet_${process.pid}_${n}`;
  const names = Array.from({ length: n }, (_, i) => `e${String(i + 1).padStart(3, "0")}`);
  const box = await startSandbox({ credentials, logSize: 1000 });
  await mkdir(path.join(dir, "config"));
  await writeFile(path.join(dir, "config/keys.yaml"), keys(10));
  const config = path.join(dir, "gatesync.yaml");
  const environments = names.map((e) => `  ${e}:\n    values: { p: ${e} }\n`).join("");
  await writeFile(
    config,
    `apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\ntargets:\n  gateway: { url: ${box.urls.gateway}, credentialEnv: GW_KEY, rateLimit: { concurrency: 32, requestsPerSecond: 5000 } }\nenvironments:\n${environments}state: { backend: postgres, urlEnv: DATABASE_URL, schema: ${schema}, pool: { size: ${poolSize}, acquireTimeout: 30s } }\nschedule: { interval: 1h, jitter: 0 }\nserver: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN }\n${runsAtOnce === undefined ? "" : `limits: { concurrentEnvironments: ${runsAtOnce} }\n`}`,
  );
  const rate = (e: string): unknown => box.inspect.store.orgKeys.get(`${e}-k0`)?.session.rate;
  let peak = 0;
  let sampling = true;
  const sampler = (async () => {
    while (sampling) {
      const got = await admin<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE usename = $1", [role]).catch(() => [{ n: "0" }]);
      peak = Math.max(peak, Number(got[0]!.n));
      await sleep(100);
    }
  })();
  const replicas: Replica[] = [];
  try {
    const t0 = performance.now();
    for (let i = 0; i < replicaCount; i++) replicas.push(spawnReplica(`r${i}`, config));
    await until(() => names.every((e) => rate(e) === 10), Boolean, 600_000, "for every environment's first sync");
    const firstSyncMs = performance.now() - t0;
    log(`[fleet-scale] ${n}: first sync ${Math.round(firstSyncMs)} ms, peak connections so far ${peak}, load ${loadNow().join("/")}`);
    await sleep(3_000);
    // a no-op round: every environment runs once more and finds nothing to do
    const live = replicas.find((r) => r.child.exitCode === null && r.child.signalCode === null);
    for (const r of replicas)
      if (r !== live || r.url === undefined) log(`[fleet-scale] replica ${r.name} (exit ${String(r.child.exitCode)}): ${r.tail.slice(-1500)}`);
    const url = live!.url!;
    const before = performance.now();
    const res = await fetch(`${url}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } });
    if (res.status !== 202) throw new Error(`POST /sync answered ${res.status}`);
    const ranAfter = (e: string): boolean => replicas.some((r) => (r.finished.get(e) ?? 0) > before);
    await until(() => names.every(ranAfter), Boolean, 600_000, "for the no-op round");
    const noopRoundMs = Math.max(...names.map((e) => Math.max(...replicas.map((r) => r.finished.get(e) ?? 0)))) - before;
    log(`[fleet-scale] ${n}: no-op round ${Math.round(noopRoundMs)} ms, peak connections so far ${peak}`);
    // SIGKILL of the replica leading the most, the commit written at the same moment
    const held = await leaders(schema);
    // replicas are named host:pid (the default): the one leading the most is killed
    const count = new Map<string, number>();
    for (const h of held.values()) if (h !== null) count.set(h, (count.get(h) ?? 0) + 1);
    const victimName = [...count].sort((x, y) => y[1] - x[1])[0]?.[0] ?? "";
    const killed = replicas.find((r) => victimName.endsWith(`:${r.child.pid}`)) ?? replicas[0]!;
    const its = names.filter((e) => held.get(e) === victimName);
    const rss = await Promise.all(replicas.map(async (r) => Math.round(await peakRssMb(r.child.pid!))));
    const k0 = performance.now();
    killed.child.kill("SIGKILL");
    await writeFile(path.join(dir, "config/keys.yaml"), keys(55));
    await until(
      async () => {
        const now = await leaders(schema);
        return its.every((e) => now.get(e) !== null && now.get(e) !== victimName);
      },
      Boolean,
      120_000,
      "for the killed replica's environments to be led",
    );
    const ledMs = performance.now() - k0;
    await until(() => its.every((e) => rate(e) === 55), Boolean, 120_000, "for the commit at the killed replica's environments");
    const appliedMs = performance.now() - k0;
    sampling = false;
    await sampler;
    return {
      environments: n,
      replicas: replicaCount,
      pool: poolSize,
      peakConnections: peak,
      connectionBound: replicaCount * (poolSize + 2),
      firstSyncMs: Math.round(firstSyncMs),
      firstSyncMsPerEnvironment: Math.round((firstSyncMs / n) * 10) / 10,
      noopRoundMs: Math.round(noopRoundMs),
      killedReplicaEnvironments: its.length,
      sigkillToLedMs: Math.round(ledMs),
      sigkillToCommitAppliedMs: Math.round(appliedMs),
      peakRssMb: rss,
      peakRssMbPerEnvironment: Math.round((Math.max(...rss) / n) * 100) / 100,
      loadAverage: loadNow(),
    };
  } finally {
    sampling = false;
    for (const r of replicas) {
      r.child.kill("SIGKILL");
      await gone(r);
    }
    await box.stop();
    for (const s of [schema, ...names.map((e) => `${schema}_${e}`)]) await admin(`DROP SCHEMA IF EXISTS ${s} CASCADE`).catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

export async function fleetScaleOnly(): Promise<void> {
  if (!(await postgresReachable())) throw new Error(`PostgreSQL is not reachable at ${databaseUrl} (GATESYNC_BENCH_DATABASE_URL)`);
  await admin(`DO $$ BEGIN IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '${role}') THEN CREATE ROLE ${role} LOGIN; END IF; END $$`);
  await admin(`GRANT CREATE ON DATABASE ${new URL(databaseUrl).pathname.slice(1) || "test"} TO ${role}`);
  // the ownership registry (docs/user/teams.md) prepared by the owner of the database, then the grants a daemon's role needs on it
  const registry = new PostgresOwnership(new PostgresStateBackend({ url: databaseUrl, schema: ownershipSchema }));
  await registry.rowsOf([]).finally(() => registry.close());
  await admin(`GRANT USAGE, CREATE ON SCHEMA ${ownershipSchema} TO ${role}`);
  await admin(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${ownershipSchema}.owners TO ${role}`);
  const started = Date.now();
  const start = loadNow();
  const rows: Record<string, unknown>[] = [];
  for (const n of sizes) {
    const row = await oneSize(n);
    log(`[fleet-scale] ${JSON.stringify(row)}`);
    rows.push(row);
  }
  const results = { ...resultsHead("fleet-scale", start, started), lease: { durationMs: 5_000, renewMs: 1_000 }, rows };
  await writeFile(path.join(here, "results.fleet-scale.json"), `${JSON.stringify(results, null, 2)}\n`);
  process.stdout.write(
    `| environments | peak connections (bound) | first sync | no-op round | SIGKILL → led | → commit applied | peak RSS per replica |\n|---|---|---|---|---|---|---|\n${rows
      .map(
        (r) =>
          `| ${String(r.environments)} | ${String(r.peakConnections)} (${String(r.connectionBound)}) | ${String(r.firstSyncMs)} ms | ${String(r.noopRoundMs)} ms | ${String(r.sigkillToLedMs)} ms | ${String(r.sigkillToCommitAppliedMs)} ms | ${(r.peakRssMb as number[]).join(" / ")} MiB |`,
      )
      .join("\n")}\n`,
  );
}
