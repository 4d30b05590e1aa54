/**
 * The history rows of a SQLite state (history.ts; table `history`, migration 2 of
 * sqlite-schema.ts). An append is one IMMEDIATE transaction of its own: it folds into the
 * newest row or inserts, then drops what the bound no longer keeps. It takes no state lock —
 * rows never change the records or the serial — so a run that ended without the lock (a
 * refused commit, a failed fetch) is recorded too.
 */
import type Database from "better-sqlite3";
import type { HistoryBound } from "../../config/history-section.js";
import type { HistoryDraft, HistoryEntry, HistoryQuery } from "../history/history.js";
import { entryOfRow, keptSince } from "../history/history.js";
import { statement } from "./statements.js";

interface HistoryRow {
  readonly seq: number;
  readonly started_at: string;
  readonly last_at: string;
  readonly repeats: number;
  readonly record: string;
}

const foldSql = `UPDATE history SET repeats = repeats + 1, last_at = ?, record = ? WHERE seq = (SELECT max(seq) FROM history) AND fold_key = ?
  RETURNING seq, started_at, last_at, repeats, record`;
const insertSql = `INSERT INTO history (kind, started_at, last_at, repeats, fold_key, record) VALUES (?, ?, ?, 0, ?, ?)
  RETURNING seq, started_at, last_at, repeats, record`;
// the bound is per kind (history.ts): the newest `keep` rows of the kind just written stay — a
// burst of runs never prunes a promotion or verification, the rollback targets — read off the
// (kind, seq) index, which holds both columns: walking it to the OFFSET reads no row's page
export const pruneKindSql = `DELETE FROM history WHERE kind = ? AND seq < (SELECT seq FROM history WHERE kind = ? ORDER BY seq DESC LIMIT 1 OFFSET ?)`;
// runs alone also go by age (off the age index, migration 3: `+kind` keeps the kind's index, which
// would read every run's page, out of it), the newest run whatever its age
export const pruneAgeSql = `DELETE FROM history WHERE last_at < ? AND +kind = 'run' AND seq <> (SELECT max(seq) FROM history WHERE kind = 'run')`;

/**
 * Commits without waiting for the disk (`synchronous = NORMAL` for this transaction alone, the
 * records' writes stay FULL): a row survives the process being killed at any moment (WAL), a
 * power cut may lose the newest rows — and a run's row, written on the event loop after every
 * run, costs no fsync (bench/history.ts).
 */
export function appendSqliteHistory(db: Database.Database, draft: HistoryDraft, bound: HistoryBound, corrupt: (what: string) => Error): HistoryEntry {
  const { record } = draft;
  const text = JSON.stringify(record);
  db.pragma("synchronous = NORMAL");
  try {
    return db
      .transaction((): HistoryEntry => {
        const folded = draft.foldKey === undefined ? undefined : (statement(db, foldSql).get(record.finishedAt, text, draft.foldKey) as HistoryRow | undefined);
        // a fold adds no row: nothing more to drop
        if (folded !== undefined) return entryOfRow(folded, corrupt);
        const row = statement(db, insertSql).get(record.kind, record.startedAt, record.finishedAt, draft.foldKey ?? null, text) as HistoryRow;
        statement(db, pruneKindSql).run(record.kind, record.kind, bound.keep - 1);
        statement(db, pruneAgeSql).run(keptSince(bound, new Date()));
        return entryOfRow(row, corrupt);
      })
      .immediate();
  } finally {
    db.pragma("synchronous = FULL");
  }
}

export function readSqliteHistory(db: Database.Database, query: HistoryQuery, corrupt: (what: string) => Error): HistoryEntry[] {
  const rows = statement(db, "SELECT seq, started_at, last_at, repeats, record FROM history WHERE kind = ? ORDER BY seq DESC LIMIT ?").all(
    query.kind,
    query.limit,
  ) as HistoryRow[];
  return rows.map((r) => entryOfRow(r, corrupt));
}
