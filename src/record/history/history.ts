/**
 * The environment's history, kept in its state beside the records (docs/user/state.md): rows
 * newest first, each of a `kind` — the daemon's runs (daemon/run-record.ts says what a run row
 * holds), and the verifications and promotions of revisions (promotion-history.ts), which readers
 * of runs pass over — bounded by the operator's `history: { keep, maxAge }` per kind: the newest
 * `keep` rows of each kind stay, so a burst of runs never prunes a promotion or verification (the
 * rollback targets), and only runs go by age (a promotion a month old is still where a rollback
 * goes), the newest run whatever its age. It survives restarts
 * and fail-overs, and every replica reads the same rows: a standby shows the leader's runs.
 * Rows never change the records or the serial, so appending one needs no state lock.
 */
import type { HistoryBound } from "../../config/history-section.js";

/** The kinds of rows this gatesync writes. */
export type HistoryKind = "run" | "verification" | "promotion" | "freeze" | "ownership";

/** What every row holds; the rest is its kind's. */
export interface HistoryRecord {
  readonly kind: HistoryKind;
  readonly startedAt: string;
  readonly finishedAt: string;
}

/** A row as read: its record, its place (`seq` grows), and how many quiet repeats were folded into it. */
export interface HistoryEntry<R extends HistoryRecord = HistoryRecord> {
  readonly seq: number;
  readonly record: R;
  /** Further rows with the same fold key folded into this one (quiet runs: nothing to do, same revision); the record is the newest's. */
  readonly repeats: number;
  /** When the first of the folded rows started (the record's own start without repeats). */
  readonly firstAt: string;
  /** When the last of those repeats ended (the record's own end without repeats). */
  readonly lastAt: string;
}

/** A row to append; `foldKey` set: folded into the newest row when that row has the same key (its record replaced, its repeats counted). */
export interface HistoryDraft {
  readonly record: HistoryRecord;
  readonly foldKey?: string;
}

export interface HistoryQuery {
  /** Newest rows at most. */
  readonly limit: number;
  readonly kind: HistoryKind;
}

/** The history side of a state backend. */
export interface HistoryStore {
  /** Appends a row (or folds it into the newest) and drops what the bound no longer keeps, in one transaction. */
  appendHistory(draft: HistoryDraft, bound: HistoryBound): Promise<HistoryEntry>;
  /** The newest rows of a kind, newest first. */
  readHistory(query: HistoryQuery): Promise<HistoryEntry[]>;
}

/** A row of storage as an entry; `corrupt` makes the error for a row that is not one. */
export function entryOfRow(
  row: { seq: number; started_at: string; last_at: string; repeats: number; record: unknown },
  corrupt: (what: string) => Error,
): HistoryEntry {
  const record = typeof row.record === "string" ? (JSON.parse(row.record) as unknown) : row.record;
  const r = record as Partial<Record<keyof HistoryRecord, unknown>> | null;
  if (r === null || typeof r !== "object" || typeof r.kind !== "string" || typeof r.startedAt !== "string" || typeof r.finishedAt !== "string")
    throw corrupt(`history row ${row.seq} has no kind, startedAt or finishedAt`);
  return { seq: Number(row.seq), record: record as HistoryRecord, repeats: Number(row.repeats), firstAt: row.started_at, lastAt: row.last_at };
}

/** The oldest time a row may have ended at and be kept. */
export const keptSince = (bound: HistoryBound, now: Date): string => new Date(now.getTime() - bound.maxAgeMs).toISOString();
