/**
 * `BENCH_PARTS=failover`: how long an environment goes unled when its leader goes away, with two
 * real replicas of `gatesync run` (the built CLI) on PostgreSQL, one environment of two org keys
 * (one sandbox, in this process), the default lease times (state.lease: 5s, renewed every 1s).
 * For each signal sent to the leader — SIGKILL (it dies), SIGSTOP (it freezes: a paused VM),
 * SIGTERM (it stops: a rolling update) — with a new commit written at the same moment: the time
 * from the signal to the other replica leading, and to that commit applied at the sandbox.
 * Medians over BENCH_FAILOVER_RUNS runs (default 3); writes bench/results.failover.json.
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { startSandbox } from "../src/sandbox/sandbox.js";
import type { SandboxHandle } from "../src/sandbox/sandbox.js";
import { databaseUrl, postgresReachable } from "./apply-rate.js";
import { spawnDaemon, until as untilIn } from "./environments-daemon.js";
import type { Daemon } from "./environments-daemon.js";
import { credentials, loadNow, log, resultsHead } from "./common.js";
import { figure } from "./figures.js";
import type { Figure } from "./figures.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const runs = Number(process.env.BENCH_FAILOVER_RUNS ?? 3);
type Signal = "SIGKILL" | "SIGSTOP" | "SIGTERM";

/** A replica: `gatesync run` as the manifest runs it (environments-daemon.ts), on the bench's database; polled every 20 ms. */
type Replica = Daemon;
const spawnReplica = (config: string): Promise<Replica> => spawnDaemon(config, { DATABASE_URL: databaseUrl });
const until = <T>(read: () => Promise<T> | T, ok: (v: T) => boolean, ms: number, what: string): Promise<T> => untilIn(read, ok, ms, what, 20);

const keys = (rate: number): string =>
  [0, 1]
    .map((i) => `apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: k${i} }\nspec:\n  keyId: k${i}\n  rate: ${i === 0 ? rate : 10}\n`)
    .join("---\n");

const leads = async (r: Replica): Promise<boolean> =>
  (((await (await fetch(`${r.url}/status`)).json()) as { fleet?: { leads: string[] } }).fleet?.leads ?? []).includes("solo");

function gone(r: Replica): Promise<void> {
  if (r.child.exitCode !== null || r.child.signalCode !== null) return Promise.resolve();
  return new Promise((resolve) => r.child.once("close", () => resolve()));
}

/** One failover: two replicas, the leader signalled as a commit is written; ms to the other leading and to the commit applied. */
async function failoverOnce(signal: Signal, n: number): Promise<{ ledMs: number; appliedMs: number }> {
  const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-failover-"));
  const schema = `gs_bench_failover_${process.pid}_${n}`;
  const box: SandboxHandle = await startSandbox({ credentials, logSize: 1000 });
  await mkdir(path.join(dir, "config"));
  await writeFile(path.join(dir, "config/keys.yaml"), keys(10));
  const config = path.join(dir, "gatesync.yaml");
  await writeFile(
    config,
    `apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\nenvironments:\n  solo:\n    targets:\n      gateway: { url: ${box.urls.gateway}, credentialEnv: GW_KEY }\nstate: { backend: postgres, urlEnv: DATABASE_URL, schema: ${schema} }\nschedule: { interval: 1m, jitter: 0 }\nserver: { listen: "127.0.0.1:0" }\n`,
  );
  const rate = (): unknown => box.inspect.store.orgKeys.get("k0")?.session.rate;
  const replicas: Replica[] = [];
  try {
    const first = await spawnReplica(config);
    replicas.push(first);
    await until(() => leads(first), Boolean, 60_000, "for the first to lead");
    await until(rate, (r) => r === 10, 60_000, "for the first apply");
    const second = await spawnReplica(config);
    replicas.push(second);
    await sleep(2_000); // the second is a standby, seen by the first
    const t0 = performance.now();
    first.child.kill(signal);
    await writeFile(path.join(dir, "config/keys.yaml"), keys(55));
    await until(() => leads(second), Boolean, 60_000, "for the other to lead");
    const ledMs = performance.now() - t0;
    // the commit is written at the signal; the new leader runs when it takes the lease
    await until(rate, (r) => r === 55, 60_000, "for the commit");
    return { ledMs, appliedMs: performance.now() - t0 };
  } finally {
    for (const r of replicas) {
      if (signal === "SIGSTOP") r.child.kill("SIGCONT");
      r.child.kill("SIGKILL");
      await gone(r);
    }
    await box.stop();
    const c = new pg.Client({ connectionString: databaseUrl });
    await c.connect();
    for (const s of [schema, `${schema}_solo`]) await c.query(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
    await c.end();
    await rm(dir, { recursive: true, force: true });
  }
}

export async function failoverOnly(): Promise<void> {
  if (!(await postgresReachable())) throw new Error(`PostgreSQL is not reachable at ${databaseUrl} (GATESYNC_BENCH_DATABASE_URL)`);
  const started = Date.now();
  const start = loadNow();
  const rows: Record<Signal, { toLeaderMs: Figure; toCommitAppliedMs: Figure }> = {} as never;
  let n = 0;
  for (const signal of ["SIGKILL", "SIGSTOP", "SIGTERM"] as const) {
    const led: number[] = [];
    const applied: number[] = [];
    for (let i = 0; i < runs; i++) {
      const r = await failoverOnce(signal, n++);
      log(`[failover] ${signal} run ${i + 1}: led after ${Math.round(r.ledMs)} ms, commit applied after ${Math.round(r.appliedMs)} ms`);
      led.push(r.ledMs);
      applied.push(r.appliedMs);
    }
    rows[signal] = { toLeaderMs: figure(led), toCommitAppliedMs: figure(applied) };
  }
  const results = {
    ...resultsHead("failover", start, started),
    lease: { durationMs: 5_000, renewMs: 1_000 },
    runs,
    failover: rows,
  };
  await writeFile(path.join(here, "results.failover.json"), `${JSON.stringify(results, null, 2)}\n`);
  const line = (s: Signal): string =>
    `| ${s} | ${rows[s].toLeaderMs.median} ms (${rows[s].toLeaderMs.min}–${rows[s].toLeaderMs.max}) | ${rows[s].toCommitAppliedMs.median} ms (${rows[s].toCommitAppliedMs.min}–${rows[s].toCommitAppliedMs.max}) |`;
  process.stdout.write(
    `| leader gets | other replica leads | commit applied |\n|---|---|---|\n${(["SIGKILL", "SIGSTOP", "SIGTERM"] as const).map(line).join("\n")}\n\n(median of ${runs} runs, spread min–max; lease 5s renewed every 1s; ${results.durationSeconds} s)\n`,
  );
}
