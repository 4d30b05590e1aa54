/**
 * The history rows of a SQLite state (history.ts; table `history`, migration 2 of
 * sqlite-schema.ts). An append is one IMMEDIATE transaction of its own: it folds into the
 * newest row or inserts, then drops what the bound no longer keeps. It takes no state lock —
 * rows never change the records or the serial — so a run that ended without the lock (a
 * refused commit, a failed fetch) is recorded too.
 */
import type Database from "better-sqlite3";
import type { HistoryBound } from "../config/history-section.js";
import type { HistoryDraft, HistoryEntry, HistoryQuery } from "./history.js";
import { entryOfRow, keptSince } from "./history.js";

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
// the newest `keep` rows stay (the one just written among them), and of those the ones not too old;
// the newest of each kind stays whatever its age (history.ts: the promotion in force). The newest
// `keep` are the last `keep` seqs: rows go only from the bottom, so those above the cut have no gap,
// and the cut is read off the primary key and the age off its index (migration 3) — walking
// `keep` rows to an OFFSET read every row's page, ~1 MiB of page cache per environment per append
export const pruneSql = `DELETE FROM history WHERE (seq < (SELECT max(seq) - ? FROM history) OR last_at < ?)
  AND seq NOT IN (SELECT max(seq) FROM history GROUP BY kind)`;

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
        const folded = draft.foldKey === undefined ? undefined : (db.prepare(foldSql).get(record.finishedAt, text, draft.foldKey) as HistoryRow | undefined);
        // a fold adds no row: nothing more to drop
        if (folded !== undefined) return entryOfRow(folded, corrupt);
        const row = db.prepare(insertSql).get(record.kind, record.startedAt, record.finishedAt, draft.foldKey ?? null, text) as HistoryRow;
        db.prepare(pruneSql).run(bound.keep - 1, keptSince(bound, new Date()));
        return entryOfRow(row, corrupt);
      })
      .immediate();
  } finally {
    db.pragma("synchronous = FULL");
  }
}

export function readSqliteHistory(db: Database.Database, query: HistoryQuery, corrupt: (what: string) => Error): HistoryEntry[] {
  const rows = db
    .prepare("SELECT seq, started_at, last_at, repeats, record FROM history WHERE kind = ? ORDER BY seq DESC LIMIT ?")
    .all(query.kind, query.limit) as HistoryRow[];
  return rows.map((r) => entryOfRow(r, corrupt));
}
