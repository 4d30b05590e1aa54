/**
 * The bound's prune after every history append on SQLite (record/sqlite-history.ts) reads no
 * row's page: a scan of the table put each row's page in the connection's cache, tens of MiB
 * across 20 environments at their bound (bench/history.ts). Checked on a state the migrations made.
 */
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { defaultHistoryBound } from "../../src/config/history-section.js";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import { pruneAgeSql, pruneKindSql } from "../../src/record/sqlite/sqlite-history.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

describe("the SQLite history's prune", () => {
  it("walks the (kind, seq) index and the age index only, never the table", async () => {
    const file = path.join(await tempRepo(), "state.db");
    const state = new SqliteStateBackend(file);
    const at = new Date().toISOString();
    await state.appendHistory({ record: { kind: "run", startedAt: at, finishedAt: at } }, defaultHistoryBound);
    await state.close();
    const db = new Database(file, { readonly: true });
    try {
      const planOf = (sql: string, ...args: unknown[]): string[] =>
        (db.prepare(`EXPLAIN QUERY PLAN ${sql}`).all(...args) as Array<{ detail: string }>).map((r) => r.detail);
      const kind = planOf(pruneKindSql, "run", "run", defaultHistoryBound.keep - 1);
      const age = planOf(pruneAgeSql, at);
      const plan = [...kind, ...age];
      const scans = plan.filter((d) => d.startsWith("SCAN history") && !d.includes("COVERING INDEX"));
      expect(scans, plan.join("\n")).toEqual([]);
      expect(
        kind.some((d) => d.includes("history_by_kind")),
        kind.join("\n"),
      ).toBe(true);
      expect(
        age.some((d) => d.includes("history_by_last_at")),
        age.join("\n"),
      ).toBe(true);
    } finally {
      db.close();
    }
  });
});
