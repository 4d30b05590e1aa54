/**
 * What the history (record/history.ts) keeps of one run: trigger, revision, the commit's
 * author and subject, outcome, counts, duration, times, the replica that ran it, and its report
 * for the pages. A row is repository text and server answers: its lists are cut to `maxListed`
 * (the counts say how many there were) and its texts bounded; the redaction layer scrubs it on
 * its way to storage.
 */
import type { RunReport, RunResult } from "../../run/run-report.js";
import { boundText } from "../../text/bounded-text.js";
import { checkFailuresOf } from "../../apply/health-text.js";
import type { CallCounts } from "../../plan/plan.js";
import type { Action } from "../../plan/plan-change.js";
import type { HistoryEntry, HistoryRecord } from "../../record/history/history.js";
import type { SourceSnapshot } from "../../source/source.js";

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

/** The last run that applied the newest revision in full or found nothing to do. */
export interface LastSuccess {
  readonly at: string;
  readonly revision: string | undefined;
  readonly commit: string | undefined;
}

export interface RunRecord extends HistoryRecord {
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
  /** The replica that ran it (host:pid, or the fleet replica's name). */
  readonly replica: string;
  /** The newest revision was applied in full when it ended (gatesync_synced). */
  readonly synced: boolean;
  /** Carried from run to run: what /status and gatesync_last_success_* say, on every replica. */
  readonly lastSuccess?: LastSuccess;
  /** The run's report, its lists cut to `maxListed` and its texts bounded. */
  readonly report: RunReport;
  /** The changes it planned, at most `maxListed`. */
  readonly changes: ReadonlyArray<{ readonly id: string; readonly action: Action }>;
  /** Resources whose post-apply checks failed in this run, at most `maxListed` (a promotion's gate reads it). */
  readonly unhealthy?: readonly string[];
  /** Why they failed, one line each (apply/health-text.ts: the check, expected against got, the answer's excerpt), at most `maxListed`. */
  readonly checkFailures?: readonly string[];
}

export type RunEntry = HistoryEntry<RunRecord>;

/**
 * A run as an environment's view holds it between reads (ui/run-history.ts): its row without the
 * lists — the report's and the planned changes — which a page reads from the state when it shows
 * them. What the chart, the promotion rules, /status's counts and the refused-commit notice read.
 * 50 of these per environment cost some 25 KB where 50 whole rows of 1,000-change runs held
 * 13 MB of 20 environments' heap (bench/history.ts).
 */
export interface RunLineRecord extends Omit<RunRecord, "report" | "changes"> {
  /** Requests sent per interface, batch calls included (the report's summary; none when nothing was applied). */
  readonly calls?: CallCounts;
  /** Why the run failed, bounded (the report's). */
  readonly error?: string;
}

export type RunLine = HistoryEntry<RunLineRecord>;

/** A whole row as the view holds it (the lists left in the state). */
export function lineOf(entry: RunEntry): RunLine {
  const { report, changes: _changes, ...rest } = entry.record;
  const calls = report.summary?.calls;
  const record: RunLineRecord = { ...rest, ...(calls === undefined ? {} : { calls }), ...(report.error === undefined ? {} : { error: report.error }) };
  return { seq: entry.seq, repeats: entry.repeats, firstAt: entry.firstAt, lastAt: entry.lastAt, record };
}

/** Items of a list a row keeps. */
export const maxListed = 100;
/** Characters of one text a row keeps (an error, a diagnostic's message). */
const maxTextChars = 2_000;

const cut = <T>(list: readonly T[]): T[] => list.slice(0, maxListed);
const message = <T extends { readonly message: string }>(x: T): T => ({ ...x, message: boundText(x.message, maxTextChars) });

/** The report as a row keeps it: lists cut, texts bounded, no health results or error objects (the state's and the log's). */
export function boundReport(report: RunReport): RunReport {
  const bounded: RunReport = {
    ...report,
    ...(report.error === undefined ? {} : { error: boundText(report.error, maxTextChars) }),
    ...(report.diagnostics === undefined ? {} : { diagnostics: cut(report.diagnostics).map(message) }),
    ...(report.ruleFindings === undefined ? {} : { ruleFindings: cut(report.ruleFindings).map(message) }),
    ...(report.ignoredSettings === undefined ? {} : { ignoredSettings: cut(report.ignoredSettings).map(message) }),
  };
  const s = report.summary;
  if (s === undefined) return bounded;
  const { stateFailure: _failure, ...rest } = s;
  const lists = {
    applied: cut(s.applied),
    blocked: cut(s.blocked),
    orphans: cut(s.orphans),
    moved: cut(s.moved),
    adopted: cut(s.adopted),
    skipped: cut(s.skipped),
  };
  return { ...bounded, summary: { ...rest, ...lists, health: [], failed: cut(s.failed).map(message), inDoubt: cut(s.inDoubt).map(message) } };
}

/** The resources whose post-apply checks failed in a run, at most `maxListed`. */
export function unhealthyOf(report: RunReport): string[] {
  return cut((report.summary?.health ?? []).filter((h) => !h.ok).map((h) => h.id));
}

/** Why the post-apply checks of a run failed, one bounded line each, at most `maxListed`. */
export function checkFailuresOfReport(report: RunReport): string[] {
  return cut(checkFailuresOf(report.summary?.health ?? [])).map((line) => boundText(line, maxTextChars));
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

/** A run row as read, checked (a row is storage: it may be damaged); undefined when it is not a run row. */
export function runEntryOf(entry: HistoryEntry): RunEntry | undefined {
  const r = entry.record as Partial<Record<keyof RunRecord, unknown>>;
  const texts = ["trigger", "outcome", "replica"].every((f) => typeof r[f as keyof RunRecord] === "string");
  if (r.kind !== "run" || !texts || typeof r.report !== "object" || r.report === null || !Array.isArray(r.changes) || typeof r.counts !== "object")
    return undefined;
  return entry as RunEntry;
}

/** Where a run is: the revision, and a git source's commit with its author and subject. */
export function whereOf(snapshot: SourceSnapshot): { readonly revision: string } & Pick<RunReport, "commit" | "author" | "subject"> {
  const { revision, commit, author, subject } = snapshot;
  return { revision, ...(commit === undefined ? {} : { commit }), ...(author === undefined ? {} : { author }), ...(subject === undefined ? {} : { subject }) };
}
