/**
 * `BENCH_PARTS=history`: what each environment's history at its bound costs a daemon of 20
 * environments, measured end to end in one run. Two daemons as bench/environments.ts spawns them
 * (SQLite states, one sandbox per environment in this process, the same repository): one whose
 * environments' histories are empty, one whose histories were filled to the default bound (500
 * rows: runs of 1,000 changes, verifications and promotions — bench/history-rows.ts) before it
 * started. After both applied everything, no-op rounds (a push that changed nothing) alternate
 * between the two in pairs, the order swapped each pair; the figures are each daemon's median
 * round wall time, their ratio, and each daemon's RSS (the difference is the history's memory).
 * Then what one row costs on its own (SQLite, and PostgreSQL when reachable). Writes
 * bench/results.history.json.
 *
 *   BENCH_PARTS=history npx tsx bench/run.ts              # 20 × 1,000 resources, 25 pairs
 *   BENCH_QUICK=1 BENCH_PARTS=history npx tsx bench/run.ts  # 20 × 200 resources, 9 pairs
 */
import { mkdir, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import pg from "pg";
import { defaultHistoryBound } from "../src/config/history-section.js";
import { PostgresStateBackend } from "../src/record/postgres/postgres-backend.js";
import { SqliteStateBackend } from "../src/record/sqlite/sqlite-backend.js";
import type { StateBackend } from "../src/record/state.js";
import type { SandboxHandle } from "../src/sandbox/sandbox.js";
import { databaseUrl, postgresReachable } from "./apply-rate.js";
import { loadNow, log, quick, resultsHead } from "./common.js";
import { configText, count, names, peakRssMb, rounds, sandboxes, spawnDaemon, status, stopDaemon, until } from "./environments-daemon.js";
import type { Daemon } from "./environments-daemon.js";
import { withoutRefusedDocuments } from "./environments.js";
import { generateRepository } from "./generate.js";
import type { Generated } from "./generate.js";
import { fillHistory, rowCosts } from "./history-rows.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const oas = path.resolve(here, "../test/fixtures/shared/corpus/oas");
const resources = Number(process.env.BENCH_RESOURCES ?? (quick ? 200 : 1_000));
// a no-op round of 20 environments takes some 25 ms, moved by a few ms of noise: the medians need many pairs
const pairs = quick ? 9 : 25;
// /status read every 10 ms: a no-op round of 20 environments takes tens of ms, the default 100 ms poll would be the figure
const pollMs = 10;
const tenths = (x: number): number => Math.round(x * 10) / 10;

/** The daemon's V8 heap in use now (its /metrics), MiB. */
async function heapUsedMb(url: string): Promise<number> {
  const text = await (await fetch(`${url}/metrics`)).text();
  return Number(/^gatesync_nodejs_heap_size_used_bytes (\S+)/m.exec(text)?.[1] ?? Number.NaN) / 1024 / 1024;
}

/** The daemon's resident set now (VmRSS), MiB. */
async function rssMb(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  return Number(/^VmRSS:\s+(\d+)/m.exec(text)?.[1] ?? Number.NaN) / 1024;
}

const median = (xs: readonly number[]): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s.length % 2 === 1 ? s[(s.length - 1) / 2]! : (s[s.length / 2 - 1]! + s[s.length / 2]!) / 2;
};

interface Side {
  readonly label: "empty" | "full";
  readonly daemon: Daemon;
  readonly boxes: SandboxHandle[];
  readonly wallMs: number[];
  readonly runsMs: number[];
}

/** A daemon of `count` environments on its own sandboxes and SQLite states; `full`: each state's history filled to the bound first. */
async function startSide(dir: string, g: Generated, label: Side["label"]): Promise<Side> {
  const sideDir = path.join(dir, label);
  await mkdir(sideDir, { recursive: true });
  const boxes = await sandboxes(g);
  const config = path.join(sideDir, "gatesync.yaml");
  await writeFile(config, configText(g, boxes, `{ backend: sqlite, path: ${path.join(sideDir, "state.db")} }`, new Map()));
  if (label === "full") {
    log(`[history] filling ${count} histories to ${defaultHistoryBound.keep} rows`);
    for (const n of names) {
      // the path the daemon opens for environment n (config/environment-section.ts namespacedState)
      const state = new SqliteStateBackend(path.join(sideDir, `state.${n}.db`));
      try {
        await fillHistory(state, defaultHistoryBound);
      } finally {
        await state.close();
      }
    }
  }
  return { label, daemon: await spawnDaemon(config), boxes, wallMs: [], runsMs: [] };
}

async function synced(side: Side): Promise<void> {
  await until(
    () => status(side.daemon.url),
    (s) => s.environments.every((e) => e.synced),
    30 * 60_000,
    `for the ${side.label} daemon's first apply`,
  );
}

/** Rounds alternating between the two daemons, in pairs, the order swapped each pair; one unrecorded round each first. */
async function alternate(empty: Side, full: Side): Promise<string[]> {
  const results = new Set<string>();
  for (const side of [empty, full]) for (const r of (await rounds(side.daemon.url, "webhook", 1, pollMs)).results) results.add(r);
  for (let i = 0; i < pairs; i++) {
    for (const side of i % 2 === 0 ? [empty, full] : [full, empty]) {
      const round = await rounds(side.daemon.url, "webhook", 1, pollMs);
      side.wallMs.push(...round.wallMs);
      side.runsMs.push(...round.runsMs);
      for (const r of round.results) results.add(r);
    }
    log(`[history] pair ${i + 1}: empty ${empty.wallMs.at(-1)} ms, full ${full.wallMs.at(-1)} ms`);
  }
  return [...results];
}

/** Each environment's history as the full daemon reads it: the rows kept, by kind. */
async function keptRows(dir: string): Promise<Record<string, number>> {
  const state = new SqliteStateBackend(path.join(dir, "full", `state.${names[0]!}.db`));
  try {
    const kinds = ["run", "verification", "promotion"] as const;
    const counts = await Promise.all(kinds.map(async (kind) => (await state.readHistory({ kind, limit: 10_000 })).length));
    return Object.fromEntries(kinds.map((k, i) => [k, counts[i]!]));
  } finally {
    await state.close();
  }
}

async function daemonFigures(dir: string, g: Generated): Promise<Record<string, unknown>> {
  const empty = await startSide(dir, g, "empty");
  const full = await startSide(dir, g, "full").catch(async (err: unknown) => {
    await stopDaemon(empty.daemon);
    throw err;
  });
  try {
    log(`[history] first apply of ${count} × ${g.count} resources in both daemons`);
    await Promise.all([synced(empty), synced(full)]);
    const results = await alternate(empty, full);
    const side = async (s: Side): Promise<Record<string, unknown>> => ({
      noopRoundWallMs: s.wallMs,
      noopRoundMedianMs: median(s.wallMs),
      runsMs: s.runsMs,
      heapUsedMb: tenths(await heapUsedMb(s.daemon.url)),
      rssMb: tenths(await rssMb(s.daemon.child.pid!)),
      peakRssMb: tenths(await peakRssMb(s.daemon.child.pid!)),
    });
    const e = await side(empty);
    const f = await side(full);
    return {
      environments: count,
      resourcesEach: g.count,
      historyBound: defaultHistoryBound,
      keptRowsOfOneEnvironment: await keptRows(dir),
      pairs,
      results,
      empty: e,
      full: f,
      noopRoundRatio: Math.round(((f.noopRoundMedianMs as number) / (e.noopRoundMedianMs as number)) * 100) / 100,
      // each pair's rounds ran seconds apart, under the same load: the median of their ratios moves less with the load
      pairRatioMedian: Math.round(median(full.wallMs.map((w, i) => w / empty.wallMs[i]!)) * 100) / 100,
      heapUsedDifferenceMb: tenths((f.heapUsedMb as number) - (e.heapUsedMb as number)),
      rssDifferenceMb: tenths((f.rssMb as number) - (e.rssMb as number)),
      peakRssDifferenceMb: tenths((f.peakRssMb as number) - (e.peakRssMb as number)),
    };
  } finally {
    for (const s of [empty, full]) {
      await stopDaemon(s.daemon);
      for (const b of s.boxes) await b.stop();
    }
  }
}

/** One row on its own, on a state filled to the bound. */
async function rowFigures(dir: string): Promise<Record<string, unknown>> {
  const out: Record<string, unknown> = {};
  const costsOn = async (state: StateBackend): Promise<Record<string, unknown>> => {
    await fillHistory(state, defaultHistoryBound);
    return rowCosts(state, defaultHistoryBound);
  };
  const sqlite = new SqliteStateBackend(path.join(dir, "rows.db"));
  try {
    out.sqlite = await costsOn(sqlite);
  } finally {
    await sqlite.close();
  }
  if (!(await postgresReachable())) return out;
  const schema = `gs_bench_history_${process.pid}`;
  const postgres = new PostgresStateBackend({ url: databaseUrl, schema });
  try {
    out.postgres = await costsOn(postgres);
  } finally {
    await postgres.close();
    const client = new pg.Client({ connectionString: databaseUrl });
    await client.connect();
    await client.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await client.end();
  }
  return out;
}

export async function historyOnly(): Promise<void> {
  const started = Date.now();
  const start = loadNow();
  const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-history-"));
  try {
    log(`[history] generating the ${resources}-resource repository`);
    const g = await generateRepository(path.join(dir, "repo"), resources, oas);
    await withoutRefusedDocuments(g);
    const daemon = await daemonFigures(dir, g);
    log(`[history] daemons: ${JSON.stringify(daemon)}`);
    const rows = await rowFigures(dir);
    const results = {
      ...resultsHead("history", start, started),
      daemon,
      rows,
    };
    await writeFile(path.join(here, "results.history.json"), `${JSON.stringify(results, null, 2)}\n`);
    process.stdout.write(`${JSON.stringify(results, null, 2)}\n`);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}
