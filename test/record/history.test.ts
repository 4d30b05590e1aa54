/**
 * The environment's history in its state (record/history.ts), on both backends: rows appended
 * and read newest first, quiet runs folded, bounded by count and by age, scrubbed of secrets,
 * never touching the records' serial — and a state made before the history existed opens and
 * takes rows.
 */
import path from "node:path";
import Database from "better-sqlite3";
import pg from "pg";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { HistoryBound } from "../../src/config/history-section.js";
import { defaultHistoryBound } from "../../src/config/history-section.js";
import type { RunRecord } from "../../src/daemon/history/run-record.js";
import type { HistoryEntry, HistoryStore } from "../../src/record/history/history.js";
import { redactingState } from "../../src/record/wrappers/redacting-state.js";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import { redactor, registerSecret } from "../../src/secrets/redaction.js";
import { dropTestSchemas, postgresBackend, sql, testSchema } from "../helpers/postgres.js";
import { stateBackends } from "../helpers/state-backends.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(async () => {
  await dropTestSchemas();
  await removeTempRepos();
});
afterEach(() => redactor.clear());

const at = (minutesAgo: number): string => new Date(Date.now() - minutesAgo * 60_000).toISOString();

function run(n: number, extra: Partial<RunRecord> = {}): RunRecord {
  const report = { reason: "schedule", startedAt: at(0), finishedAt: at(0), durationMs: n, result: "applied" as const, revision: `r${n}` };
  return {
    kind: "run",
    trigger: "schedule",
    outcome: "applied",
    revision: `r${n}`,
    commit: `c${n}`,
    author: "Ada Lovelace",
    subject: `change ${n}`,
    counts: { applied: 1, failed: 0, inDoubt: 0, blocked: 0, skipped: 0, changes: 1, calls: 1 },
    durationMs: n,
    startedAt: at(0),
    finishedAt: at(0),
    replica: "host:1",
    synced: true,
    report,
    changes: [{ id: "OrgKey/acme", action: "update" }],
    ...extra,
  };
}

const runsOf = async (store: HistoryStore, limit = 100): Promise<HistoryEntry[]> => store.readHistory({ kind: "run", limit });
const records = (entries: readonly HistoryEntry[]): RunRecord[] => entries.map((e) => e.record as RunRecord);

describe.each(stateBackends)("%s history", (_name, open) => {
  it("appends rows newest first, read by another handle, without touching the records' serial", async () => {
    const handle = await open();
    const [a, b] = [handle(), handle()];
    try {
      const first = await a.appendHistory({ record: run(1) }, defaultHistoryBound);
      const second = await a.appendHistory({ record: run(2) }, defaultHistoryBound);
      expect(second.seq).toBeGreaterThan(first.seq);
      const seen = await runsOf(b);
      expect(records(seen).map((r) => [r.revision, r.author, r.subject])).toEqual([
        ["r2", "Ada Lovelace", "change 2"],
        ["r1", "Ada Lovelace", "change 1"],
      ]);
      expect(await b.readVersion()).toEqual({ lineage: "", serial: 0 });
    } finally {
      await a.close();
      await b.close();
    }
  });

  it("folds a quiet run into the newest row of the same key, counting it, and starts a new row otherwise", async () => {
    const state = (await open())();
    try {
      await state.appendHistory({ record: run(1) }, defaultHistoryBound);
      const quiet = (n: number): RunRecord => run(1, { outcome: "noop", trigger: n === 3 ? "webhook" : "schedule", durationMs: n, changes: [] });
      await state.appendHistory({ record: quiet(2), foldKey: "run:noop:r1" }, defaultHistoryBound);
      const folded = await state.appendHistory({ record: quiet(3), foldKey: "run:noop:r1" }, defaultHistoryBound);
      expect(folded.repeats).toBe(1);
      expect((folded.record as RunRecord).trigger).toBe("webhook");
      await state.appendHistory({ record: run(4) }, defaultHistoryBound);
      await state.appendHistory({ record: quiet(5), foldKey: "run:noop:r1" }, defaultHistoryBound);
      expect((await runsOf(state)).map((e) => [(e.record as RunRecord).durationMs, e.repeats])).toEqual([
        [5, 0],
        [4, 0],
        [3, 1],
        [1, 0],
      ]);
    } finally {
      await state.close();
    }
  });

  it("keeps N rows after N + k runs, and none older than the age bound", async () => {
    const state = (await open())();
    try {
      const keep: HistoryBound = { keep: 5, maxAgeMs: defaultHistoryBound.maxAgeMs };
      for (let n = 1; n <= 8; n++) await state.appendHistory({ record: run(n) }, keep);
      expect(records(await runsOf(state)).map((r) => r.durationMs)).toEqual([8, 7, 6, 5, 4]);
      // the newest 5 are 11, 10, 9, 8, 7; of those, 10 and 9 ended two hours ago: a one-hour bound drops them
      const old = (n: number): RunRecord => run(n, { startedAt: at(120), finishedAt: at(120) });
      for (let n = 9; n <= 10; n++) await state.appendHistory({ record: old(n) }, keep);
      await state.appendHistory({ record: run(11) }, { keep: 5, maxAgeMs: 3_600_000 });
      expect(records(await runsOf(state)).map((r) => r.durationMs)).toEqual([11, 8, 7]);
    } finally {
      await state.close();
    }
  });

  it("holds no secret: a row is scrubbed on its way in through the redaction layer", async () => {
    const state = redactingState((await open())());
    const secret = "s3cr3t-gateway-key-value";
    registerSecret(secret);
    try {
      const report = { ...run(1).report, error: `401 for key ${secret}` };
      await state.appendHistory({ record: run(1, { subject: `rotate ${secret}`, report }) }, defaultHistoryBound);
      redactor.clear();
      const text = JSON.stringify(await runsOf(state));
      expect(text).toContain("rotate");
      expect(text).not.toContain(secret);
    } finally {
      await state.close();
    }
  });
});

/** The tables of migration 1, as gatesync wrote them before the history existed. */
const sqliteV1 = `
  CREATE TABLE meta (id INTEGER PRIMARY KEY CHECK (id = 1), format_version INTEGER NOT NULL, lineage TEXT NOT NULL DEFAULT '', serial INTEGER NOT NULL DEFAULT 0, hash_key TEXT) STRICT;
  INSERT INTO meta (id, format_version, lineage, serial) VALUES (1, 1, 'old-lineage', 7);
  CREATE TABLE resources (id TEXT PRIMARY KEY, kind TEXT NOT NULL, record TEXT NOT NULL CHECK (json_valid(record)), serial INTEGER NOT NULL, updated_at TEXT NOT NULL) STRICT;
  INSERT INTO resources VALUES ('OrgKey/acme', 'OrgKey', '{"id":"OrgKey/acme","kind":"OrgKey","name":"acme","address":{},"status":"applied","createdAt":"t","updatedAt":"t"}', 7, 't');
  CREATE TABLE lock (id INTEGER PRIMARY KEY CHECK (id = 1), token TEXT, holder TEXT, pid INTEGER, host TEXT, since TEXT, heartbeat INTEGER) STRICT;
  INSERT INTO lock (id) VALUES (1);
  CREATE TABLE schema_migrations (version INTEGER PRIMARY KEY, applied_at TEXT NOT NULL) STRICT;
  INSERT INTO schema_migrations VALUES (1, 't');`;

describe("a state made before the history", () => {
  it("SQLite: opens, keeps its records and serial, and takes history rows", async () => {
    const file = path.join(await tempRepo(), "state.db");
    const db = new Database(file);
    db.exec(sqliteV1);
    db.close();
    const state = new SqliteStateBackend(file);
    try {
      expect(await runsOf(state)).toEqual([]);
      const snapshot = await state.read();
      expect([snapshot.lineage, snapshot.serial, [...snapshot.resources.keys()]]).toEqual(["old-lineage", 7, ["OrgKey/acme"]]);
      await state.appendHistory({ record: run(1) }, defaultHistoryBound);
      expect(records(await runsOf(state)).map((r) => r.subject)).toEqual(["change 1"]);
    } finally {
      await state.close();
    }
  });

  it("PostgreSQL: migrates to version 2, keeps its records and serial, and takes history rows", async () => {
    const schema = testSchema();
    const s = pg.escapeIdentifier(schema);
    await sql(`CREATE SCHEMA ${s}`);
    await sql(`CREATE TABLE ${s}.schema_migrations (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());
      INSERT INTO ${s}.schema_migrations (version) VALUES (1);
      CREATE TABLE ${s}.meta (id int PRIMARY KEY DEFAULT 1 CHECK (id = 1), format_version int NOT NULL, lineage text NOT NULL DEFAULT '', serial bigint NOT NULL DEFAULT 0, hash_key text, lock_owner text, lock_since timestamptz);
      INSERT INTO ${s}.meta (id, format_version, lineage, serial) VALUES (1, 1, 'old-lineage', 7);
      CREATE TABLE ${s}.resources (id text PRIMARY KEY, kind text NOT NULL, record jsonb NOT NULL, serial bigint NOT NULL, updated_at timestamptz NOT NULL DEFAULT now());
      INSERT INTO ${s}.resources (id, kind, record, serial) VALUES ('OrgKey/acme', 'OrgKey', '{"id":"OrgKey/acme","kind":"OrgKey","name":"acme","address":{},"status":"applied","createdAt":"t","updatedAt":"t"}', 7);`);
    const state = postgresBackend(schema);
    try {
      expect(await runsOf(state)).toEqual([]);
      const snapshot = await state.read();
      expect([snapshot.lineage, snapshot.serial, [...snapshot.resources.keys()]]).toEqual(["old-lineage", 7, ["OrgKey/acme"]]);
      await state.appendHistory({ record: run(1) }, defaultHistoryBound);
      expect(records(await runsOf(state)).map((r) => r.subject)).toEqual(["change 1"]);
      expect((await sql<{ version: number }>(`SELECT version FROM ${s}.schema_migrations ORDER BY version`)).map((v) => v.version)).toEqual([1, 2]);
    } finally {
      await state.close();
    }
  });
});
