/**
 * The history rows of a PostgreSQL state (history.ts; table `history`, migration 2 of
 * postgres-schema.ts), on the reading pool: an append is a transaction of its own, which folds
 * into the newest row or inserts, then drops what the bound no longer keeps. It takes no state
 * lock — rows never change the records or the serial — and every replica reads the same rows:
 * a standby shows the leader's runs.
 */
import type pg from "pg";
import type { HistoryBound } from "../../config/history-section.js";
import type { HistoryDraft, HistoryEntry, HistoryQuery } from "../history/history.js";
import { entryOfRow, keptSince } from "../history/history.js";

interface HistoryRow {
  readonly seq: string;
  readonly started_at: string;
  readonly last_at: string;
  readonly repeats: number;
  readonly record: unknown;
}

// times as the ISO text the records hold (timestamptz would come back as a Date)
const iso = (column: string): string => `to_char(${column} AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"') AS ${column}`;
const columns = `seq, ${iso("started_at")}, ${iso("last_at")}, repeats, record`;

export async function appendPostgresHistory(
  client: pg.PoolClient,
  s: string,
  draft: HistoryDraft,
  bound: HistoryBound,
  corrupt: (what: string) => Error,
): Promise<HistoryEntry> {
  const { record } = draft;
  // one append at a time per state: two replicas folding into the same newest row stay exact;
  // as SQLite's rows: committed without waiting for the WAL flush (a server crash may lose the newest rows, never the records).
  // One simple query of two statements: a round trip fewer in every run (node-postgres does not pipeline)
  await client.query(`LOCK TABLE ${s}.history IN SHARE ROW EXCLUSIVE MODE; SET LOCAL synchronous_commit = off`);
  const folded =
    draft.foldKey === undefined
      ? undefined
      : (
          await client.query<HistoryRow>(
            `UPDATE ${s}.history SET repeats = repeats + 1, last_at = $1, record = $2 WHERE seq = (SELECT max(seq) FROM ${s}.history) AND fold_key = $3 RETURNING ${columns}`,
            [record.finishedAt, JSON.stringify(record), draft.foldKey],
          )
        ).rows[0];
  // a fold adds no row: nothing more to drop
  if (folded !== undefined) return entryOfRow({ ...folded, seq: Number(folded.seq) }, corrupt);
  const row = (
    await client.query<HistoryRow>(
      `INSERT INTO ${s}.history (kind, started_at, last_at, repeats, fold_key, record) VALUES ($1, $2, $3, 0, $4, $5) RETURNING ${columns}`,
      [record.kind, record.startedAt, record.finishedAt, draft.foldKey ?? null, JSON.stringify(record)],
    )
  ).rows[0]!;
  // the bound is per kind, as SQLite's (sqlite-history.ts): the newest `keep` rows of the kind just
  // written stay; runs alone also go by age, the newest run whatever its age. One statement: the two
  // conditions read one snapshot, which is what running them one after the other saw (neither
  // subquery's row is one the other condition removes)
  await client.query(
    `DELETE FROM ${s}.history WHERE (kind = $1 AND seq < (SELECT seq FROM ${s}.history WHERE kind = $1 ORDER BY seq DESC LIMIT 1 OFFSET $2))
       OR (last_at < $3 AND kind = 'run' AND seq <> (SELECT max(seq) FROM ${s}.history WHERE kind = 'run'))`,
    [record.kind, bound.keep - 1, keptSince(bound, new Date())],
  );
  return entryOfRow({ ...row, seq: Number(row.seq) }, corrupt);
}

export async function readPostgresHistory(client: pg.PoolClient, s: string, query: HistoryQuery, corrupt: (what: string) => Error): Promise<HistoryEntry[]> {
  const rows = (await client.query<HistoryRow>(`SELECT ${columns} FROM ${s}.history WHERE kind = $1 ORDER BY seq DESC LIMIT $2`, [query.kind, query.limit]))
    .rows;
  return rows.map((r) => entryOfRow({ ...r, seq: Number(r.seq) }, corrupt));
}
