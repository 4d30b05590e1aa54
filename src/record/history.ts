/**
 * The environment's history, kept in its state beside the records (docs/user/state.md): every
 * run of the daemon that leads it — trigger, revision, the commit's author and subject,
 * outcome, counts, duration, times, which replica ran it — newest first, bounded by the
 * operator's `history: { keep, maxAge }`. It survives restarts and fail-overs, and a standby
 * reads the leader's runs from it. A row has a `kind`: runs today; verifications and
 * promotions (issue 46) are further kinds beside them, which readers of runs pass over.
 *
 * A row is repository text and server answers: every text is cut to a bound, every list to a
 * count (the counts say how many there were), and the redaction layer scrubs it on its way in.
 */
import type { RunReport, RunResult } from "../apply/run-report.js";
import type { Action } from "../plan/plan-change.js";

/** The kinds of rows this gatesync writes; a row of another kind (a newer gatesync's) is passed over. */
export type HistoryKind = "run";

/** How many of each outcome one run had. */
export interface RunCounts {
  readonly applied: number;
  readonly failed: number;
  readonly inDoubt: number;
  readonly blocked: number;
  readonly skipped: number;
  /** Changes the run planned (no-ops left out). */
  readonly changes: number;
  /** Requests sent to the interfaces (batch calls included). */
  readonly calls: number;
}

/** The last run that applied the revision in force, or found nothing to do. */
export interface LastSuccess {
  readonly at: string;
  readonly revision: string | undefined;
  readonly commit: string | undefined;
}

export interface RunRecord {
  readonly kind: "run";
  /** What asked for the run: schedule, webhook, sync, leadership … */
  readonly trigger: string;
  readonly outcome: RunResult;
  readonly revision?: string;
  readonly commit?: string;
  /** The commit's author and subject line (a git source; a directory source has none). */
  readonly author?: string;
  readonly subject?: string;
  readonly counts: RunCounts;
  readonly durationMs: number;
  readonly startedAt: string;
  readonly finishedAt: string;
  /** The replica that ran it (host:pid, or the fleet replica's name). */
  readonly replica: string;
  /** The newest revision was applied in full when it ended (gatesync_synced). */
  readonly synced: boolean;
  /** Carried from run to run: what /status and gatesync_last_success_* say, on every replica. */
  readonly lastSuccess?: LastSuccess;
  /** The run's report, its lists cut to `maxListed` and its texts to `maxTextChars`. */
  readonly report: RunReport;
  /** The changes it planned, at most `maxListed`. */
  readonly changes: ReadonlyArray<{ readonly id: string; readonly action: Action }>;
}

export type HistoryRecord = RunRecord;

/** A row as read: its record, its place (`seq` grows), and how many quiet repeats were folded into it. */
export interface HistoryEntry {
  readonly seq: number;
  readonly kind: HistoryKind;
  readonly record: HistoryRecord;
  /** Further runs with the same outcome and revision and nothing to do, folded into this row. */
  readonly repeats: number;
  /** When the last of those repeats ended (the record's own end without repeats). */
  readonly lastAt: string;
}

/** A row to append; `foldKey` set: folded into the newest row when that row has the same key. */
export interface HistoryDraft {
  readonly record: HistoryRecord;
  readonly foldKey?: string;
}

/** The operator's bound (`history:` of gatesync.yaml): at most `keep` rows, none older than `maxAgeMs`. */
export interface HistoryBound {
  readonly keep: number;
  readonly maxAgeMs: number;
}

export const defaultHistoryBound: HistoryBound = { keep: 500, maxAgeMs: 30 * 24 * 3_600_000 };

export interface HistoryQuery {
  /** Newest rows at most. */
  readonly limit: number;
  readonly kind?: HistoryKind;
}

/** The history side of a state backend. Appending needs no state lock: rows never change the records or the serial. */
export interface HistoryStore {
  /** Appends a row (or folds it into the newest) and drops what the bound no longer keeps, in one transaction. */
  appendHistory(draft: HistoryDraft, bound: HistoryBound): Promise<HistoryEntry>;
  /** The newest rows, newest first. */
  readHistory(query: HistoryQuery): Promise<HistoryEntry[]>;
}

/** Items of a list a row keeps; the counts say how many there were. */
export const maxListed = 100;
/** Characters of one text a row keeps (an error, a diagnostic's message). */
export const maxTextChars = 2_000;
/** Characters of a commit's author or subject a row keeps. */
export const maxCommitTextChars = 200;

/** A text cut to `max` characters, saying so; control characters (a subject is repository text) as spaces. */
export function boundText(text: string, max = maxTextChars): string {
  // eslint-disable-next-line no-control-regex -- replacing them is the point
  const clean = text.replace(/[\u0000-\u0008\u000b-\u001f\u007f]/g, " ");
  return clean.length <= max ? clean : `${clean.slice(0, max)}… (${clean.length - max} more characters)`;
}

const cut = <T>(list: readonly T[] | undefined): T[] | undefined => list?.slice(0, maxListed);

/** The report as a row keeps it: lists cut, texts bounded, nothing of a server's answer beyond its message. */
export function boundReport(report: RunReport): RunReport {
  const s = report.summary;
  const message = <T extends { readonly message: string }>(x: T): T => ({ ...x, message: boundText(x.message) });
  const bounded: RunReport = {
    ...report,
    ...(report.error === undefined ? {} : { error: boundText(report.error) }),
    ...(report.diagnostics === undefined ? {} : { diagnostics: cut(report.diagnostics)!.map(message) }),
    ...(report.ruleFindings === undefined ? {} : { ruleFindings: cut(report.ruleFindings)!.map(message) }),
    ...(report.ignoredSettings === undefined ? {} : { ignoredSettings: cut(report.ignoredSettings)!.map(message) }),
  };
  if (s === undefined) return bounded;
  // health results and a state failure's error object are the state's and the log's to keep
  const { stateFailure: _failure, health: _health, ...rest } = s;
  return {
    ...bounded,
    summary: {
      ...rest,
      health: [],
      applied: cut(s.applied)!,
      failed: cut(s.failed)!.map(message),
      inDoubt: cut(s.inDoubt)!.map(message),
      blocked: cut(s.blocked)!,
      orphans: cut(s.orphans)!,
      moved: cut(s.moved)!,
      adopted: cut(s.adopted)!,
      skipped: cut(s.skipped)!,
    },
  };
}

/** The counts of a report and its planned changes, before any list is cut. */
export function countsOf(report: RunReport, changes: number): RunCounts {
  const s = report.summary;
  return {
    applied: s?.applied.length ?? 0,
    failed: s?.failed.length ?? 0,
    inDoubt: s?.inDoubt.length ?? 0,
    blocked: s?.blocked.length ?? 0,
    skipped: s?.skipped.length ?? 0,
    changes,
    calls: s?.calls.total ?? 0,
  };
}

/** Checks a row read from storage; returns what is wrong, or undefined. */
export function historyRecordProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return "a history row is not an object";
  const r = value as Record<string, unknown>;
  for (const field of ["trigger", "outcome", "startedAt", "finishedAt", "replica"]) if (typeof r[field] !== "string") return `a history row has no ${field}`;
  if (r.report === null || typeof r.report !== "object" || !Array.isArray(r.changes)) return "a history row has no report or changes";
  return undefined;
}

/** A row as an entry; `corrupt` makes the error for a row that is not one. */
export function entryOfRow(
  row: { seq: number; kind: string; last_at: string; repeats: number; record: unknown },
  corrupt: (what: string) => Error,
): HistoryEntry {
  const record = typeof row.record === "string" ? (JSON.parse(row.record) as unknown) : row.record;
  const problem = historyRecordProblem(record);
  if (problem !== undefined) throw corrupt(`history row ${row.seq}: ${problem}`);
  return { seq: Number(row.seq), kind: row.kind as HistoryKind, record: record as HistoryRecord, repeats: Number(row.repeats), lastAt: row.last_at };
}

/** The oldest time a row may have ended at and be kept. */
export const keptSince = (bound: HistoryBound, now: Date): string => new Date(now.getTime() - bound.maxAgeMs).toISOString();
