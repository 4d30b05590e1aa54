/**
 * The bound's prune after every history append on SQLite (record/sqlite-history.ts) reads no
 * row's page: a scan of the table put each row's page in the connection's cache, tens of MiB
 * across 20 environments at their bound (bench/history.ts). Checked on a state the migrations made.
 */
import path from "node:path";
import Database from "better-sqlite3";
import { afterAll, describe, expect, it } from "vitest";
import { defaultHistoryBound } from "../../src/config/history-section.js";
import { SqliteStateBackend } from "../../src/record/sqlite-backend.js";
import { pruneSql } from "../../src/record/sqlite-history.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

describe("the SQLite history's prune", () => {
  it("walks the primary key and the age index only, never the table", async () => {
    const file = path.join(await tempRepo(), "state.db");
    const state = new SqliteStateBackend(file);
    const at = new Date().toISOString();
    await state.appendHistory({ record: { kind: "run", startedAt: at, finishedAt: at } }, defaultHistoryBound);
    await state.close();
    const db = new Database(file, { readonly: true });
    try {
      const plan = (db.prepare(`EXPLAIN QUERY PLAN ${pruneSql}`).all(defaultHistoryBound.keep - 1, at) as Array<{ detail: string }>).map((r) => r.detail);
      const scans = plan.filter((d) => d.startsWith("SCAN history") && !d.includes("COVERING INDEX"));
      expect(scans, plan.join("\n")).toEqual([]);
      expect(plan.some((d) => d.includes("history_by_last_at"))).toBe(true);
    } finally {
      db.close();
    }
  });
});
