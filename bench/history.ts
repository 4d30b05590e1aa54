/**
 * `tsx bench/history.ts`: what the history (record/history.ts) costs a daemon of 20
 * environments at its bound (500 rows each, of a run of 1,000 changes cut to 100): the time one
 * run's row takes to append — a new row, and a quiet run folded into the newest — on SQLite
 * (synchronous, on the event loop) and PostgreSQL (on the pool), the time a standby's read of
 * the 50 newest rows takes, and the heap the 20 environments' views hold. Compared with the
 * no-op round of bench/results.environments.json (20 environments × 1,000 resources, nothing to
 * do). Writes bench/results.history.json.
 */
import { mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { cpus, loadavg, tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { defaultHistoryBound } from "../src/config/history-section.js";
import type { RunRecord } from "../src/daemon/run-record.js";
import { boundReport } from "../src/daemon/run-record.js";
import { RunHistory } from "../src/daemon/ui/run-history.js";
import { PostgresStateBackend } from "../src/record/postgres-backend.js";
import { SqliteStateBackend } from "../src/record/sqlite-backend.js";
import type { StateBackend } from "../src/record/state.js";
import { databaseUrl, postgresReachable } from "./apply-rate.js";
import { log, repeat, time } from "./common.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const environments = 20;
const resources = 1_000;

/** A row as a run of 1,000 applied changes leaves it (its lists cut to 100 by boundReport). */
function bigRun(n: number): RunRecord {
  const ids = Array.from({ length: resources }, (_, i) => `OrgKey/key-${String(i).padStart(4, "0")}`);
  const calls = { gateway: 1000, portal: 0, dashboard: 0, llm: 0, mail: 0, batchCalls: 20, batched: 1000, total: 1020, checks: 0, retries: 0, pauses: 0 };
  const summary = {
    applied: ids,
    failed: [],
    inDoubt: [],
    blocked: [],
    unchanged: 0,
    orphans: [],
    moved: [],
    adopted: [],
    quotaResets: 0,
    health: [],
    calls,
    skipped: [],
    durationMs: 9000,
  };
  const at = new Date().toISOString();
  const report = boundReport({
    reason: "schedule",
    startedAt: at,
    finishedAt: at,
    durationMs: 9000,
    result: "applied",
    revision: `r${n}`,
    commit: `c${n}`,
    summary,
  });
  return {
    kind: "run",
    trigger: "schedule",
    outcome: "applied",
    revision: `r${n}`,
    commit: "0123456789abcdef0123456789abcdef01234567",
    author: "Ada Lovelace",
    subject: "raise the rate of every key of the storefront team to 20 requests per second",
    counts: { applied: resources, failed: 0, inDoubt: 0, blocked: 0, skipped: 0, changes: resources, calls: 1020 },
    durationMs: 9000,
    startedAt: at,
    finishedAt: at,
    replica: "bench:1",
    synced: true,
    report,
    changes: ids.slice(0, 100).map((id) => ({ id, action: "update" as const })),
  };
}

/** Fills a state to its bound, then times new rows, folded quiet rows and the read of the newest 50. */
async function costs(state: StateBackend): Promise<Record<string, unknown>> {
  for (let n = 0; n < defaultHistoryBound.keep; n++) await state.appendHistory({ record: bigRun(n) }, defaultHistoryBound);
  const quiet = { ...bigRun(0), outcome: "noop" as const, changes: [], counts: { ...bigRun(0).counts, applied: 0, changes: 0, calls: 0 } };
  return {
    appendMs: await repeat(20, () => time(() => state.appendHistory({ record: bigRun(1) }, defaultHistoryBound))),
    foldMs: await repeat(20, () => time(() => state.appendHistory({ record: quiet, foldKey: "run:noop:r0" }, defaultHistoryBound))),
    readNewest50Ms: await repeat(20, () => time(() => state.readHistory({ kind: "run", limit: 50 }))),
  };
}

/** The heap 20 environments' views hold, each loaded with its newest 50 rows. */
async function viewHeapMb(state: StateBackend): Promise<number> {
  const gc = (globalThis as { gc?: () => void }).gc;
  gc?.();
  const before = process.memoryUsage().heapUsed;
  const views = Array.from(
    { length: environments },
    () =>
      new RunHistory({
        store: state,
        bound: () => defaultHistoryBound,
        replica: "bench",
        follows: () => false,
        syncedHere: () => true,
        onError: () => undefined,
      }),
  );
  for (const v of views) await v.load();
  gc?.();
  const mb = (process.memoryUsage().heapUsed - before) / 1024 / 1024;
  if (views.some((v) => v.entries().length !== 50)) throw new Error("a view did not load 50 rows");
  return Math.round(mb * 10) / 10;
}

async function main(): Promise<void> {
  const start = loadavg();
  const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-history-"));
  const sqlite = new SqliteStateBackend(path.join(dir, "state.db"));
  const out: Record<string, unknown> = { date: new Date().toISOString(), machine: { node: process.version, cores: cpus().length } };
  try {
    out.sqlite = await costs(sqlite);
    out.viewsHeapMb = await viewHeapMb(sqlite);
    log(`sqlite: ${JSON.stringify(out.sqlite)}; 20 views of 50 rows: ${String(out.viewsHeapMb)} MiB of heap`);
  } finally {
    await sqlite.close();
    await rm(dir, { recursive: true, force: true });
  }
  if (await postgresReachable()) {
    const schema = `gs_bench_history_${process.pid}`;
    const postgres = new PostgresStateBackend({ url: databaseUrl, schema });
    try {
      out.postgres = await costs(postgres);
      log(`postgres: ${JSON.stringify(out.postgres)}`);
    } finally {
      await postgres.close();
      const client = new pg.Client({ connectionString: databaseUrl });
      await client.connect();
      await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await client.end();
    }
  }
  const environmentsRun = JSON.parse(await readFile(path.join(here, "results.environments.json"), "utf8")) as {
    oneDaemon?: { noopRound?: { wallMs: number[] } };
  };
  const noop = [...(environmentsRun.oneDaemon?.noopRound?.wallMs ?? [])].sort((a, b) => a - b);
  out.noopRoundWallMs = noop[Math.floor(noop.length / 2)];
  out.loadAverage = { start, end: loadavg() };
  await writeFile(path.join(here, "results.history.json"), `${JSON.stringify(out, null, 2)}\n`);
}

await main();
