/**
 * The environment's runs as the pages, /status and the metrics see them: a view of the history
 * kept in its state (record/history.ts) — its newest rows in memory as lines (`RunLine`: no
 * lists; the newest row whole), the lists read from the state when a page shows them — and the
 * run in progress, told to live listeners (server-sent events) as it goes.
 *
 * The replica that runs the environment appends each run as it ends (quiet runs — nothing to
 * do, same revision — folded into the newest row); a standby appends nothing and reads the
 * leader's rows instead, after each of its own loop's turns and whenever a page or /status is
 * asked for and its copy is older than `freshMs`.
 */
import type { Progress } from "../../apply/executor.js";
import type { RunReport } from "../../run/run-report.js";
import type { HistoryBound } from "../../config/history-section.js";
import type { Plan } from "../../plan/plan.js";
import type { Action } from "../../plan/plan-change.js";
import type { HistoryStore } from "../../record/history/history.js";
import { boundReport, checkFailuresOfReport, countsOf, lineOf, maxListed, runEntryOf, unhealthyOf } from "./run-record.js";
import type { LastSuccess, RunEntry, RunLine, RunRecord } from "./run-record.js";

export interface ResourceHistoryItem {
  readonly seq: number;
  readonly at: string;
  readonly commit: string | undefined;
  readonly action: Action;
  /** What happened to it: applied, failed, in-doubt, blocked, skipped, planned. */
  readonly outcome: string;
}

export interface LiveState {
  readonly running: boolean;
  readonly reason?: string;
  readonly startedAt?: string;
  readonly done: number;
  readonly total: number;
  readonly last?: string;
  /** Sequence number of the newest finished run. */
  readonly seq: number;
}

export type LiveListener = (state: LiveState) => void;

export interface RunHistoryOptions {
  /** The environment's state. */
  readonly store: HistoryStore;
  /** The operator's bound in force (a reload may change it). */
  readonly bound: () => HistoryBound;
  /** This replica's name, recorded with each run it ran. */
  readonly replica: string;
  /** Whether another replica runs the environment now (this one is a standby): its rows are read, none written. */
  readonly follows: () => boolean;
  /**
   * While this replica runs the environment, its loop's own answer to "synced": it knows, before
   * the run ends, that a newer revision is being applied. A standby takes the leader's newest row's.
   */
  readonly syncedHere: () => boolean;
  /** The newest run changed (this replica's, or the leader's as read). */
  readonly onNewest?: (newest: RunEntry, lastSuccess: LastSuccess | undefined) => void;
  /** A row that could not be written or read: the view stays as it was. */
  readonly onError: (err: unknown) => void;
  /** Rows held in memory as lines, and read whole for the runs page (default 50). */
  readonly window?: number;
  /** A standby's copy older than this is read again when asked for (default 2 s). */
  readonly freshMs?: number;
}

function outcomeOf(report: RunReport, id: string, action: Action): string {
  const s = report.summary;
  if (s === undefined) return report.result === "invalid" ? "refused" : "planned";
  if (s.applied.includes(id)) return "applied";
  if (s.failed.some((f) => f.id === id)) return "failed";
  if (s.inDoubt.some((f) => f.id === id)) return "in-doubt";
  if (s.skipped.includes(id)) return "skipped";
  if (s.blocked.includes(id) || action === "blocked") return "blocked";
  return action === "orphan" ? "orphan" : "planned";
}

/**
 * Outcomes a quiet repeat of the run before has — nothing to do, the same refused revision, the
 * same source still unreachable — folded into its row, so that they do not push real runs out.
 */
const repeated = new Set(["noop", "invalid", "source-error", "waiting", "frozen"]);

/** Outcomes that mean the newest revision stands applied: the last success on every replica's /status and metrics. */
const successes = new Set(["applied", "noop"]);

export class RunHistory {
  /** The newest rows, newest first, as lines: their lists stay in the state. */
  private lines: RunLine[] = [];
  /** The newest row whole (/status's plan, the overview's last run). */
  private newestRow: RunEntry | undefined;
  private readonly listeners = new Set<LiveListener>();
  private state: LiveState = { running: false, done: 0, total: 0, seq: 0 };
  /** Rows asked to be written and not yet written: a read meanwhile would drop them from the view. */
  private writing = 0;
  private tail: Promise<unknown> = Promise.resolve();
  private readAt = -Infinity;
  /** Until when a standby's heads read (standby-heads.ts) stands for a read of its own. */
  private followedUntil = -Infinity;

  constructor(private readonly opts: RunHistoryOptions) {}

  get live(): LiveState {
    return this.state;
  }

  /** The newest rows held, newest first, without their lists (`rows` reads them whole). */
  entries(): readonly RunLine[] {
    return this.lines;
  }

  /** The newest run whole, by whichever replica ran it. */
  newest(): RunEntry | undefined {
    return this.newestRow;
  }

  /**
   * The newest rows whole, newest first, read from the state (the runs page); the run shown and
   * not yet written, on top. Undefined when the state cannot be read (said through `onError`).
   */
  async rows(): Promise<readonly RunEntry[] | undefined> {
    try {
      const stored = await this.readRows();
      const shown = this.newestRow;
      if (this.writing === 0 || shown === undefined) return stored;
      return [shown, ...stored.filter((e) => e.seq !== shown.seq)].slice(0, this.window);
    } catch (err) {
      this.opts.onError(err);
      return undefined;
    }
  }

  private get window(): number {
    return this.opts.window ?? 50;
  }

  /** The newest `window` run rows the state holds, whole. */
  private async readRows(): Promise<RunEntry[]> {
    return (await this.opts.store.readHistory({ kind: "run", limit: this.window })).flatMap((r) => runEntryOf(r) ?? []);
  }

  /** The newest revision is applied in full: this replica's loop says so, or on a standby the leader's newest run. */
  get synced(): boolean {
    return this.opts.follows() ? (this.lines[0]?.record.synced ?? false) : this.opts.syncedHere();
  }

  /** The newest run that left the newest revision applied (its quiet repeats included), as the newest row says. */
  lastSuccess(): LastSuccess | undefined {
    const newest = this.lines[0];
    if (newest === undefined || !successes.has(newest.record.outcome)) return newest?.record.lastSuccess;
    return { at: newest.lastAt, revision: newest.record.revision, commit: newest.record.commit };
  }

  /** Reads the newest rows again (at start; a standby, to follow the leader); a failed read is reported and leaves the view. */
  async load(): Promise<void> {
    if (this.writing > 0) return;
    try {
      const entries = await this.readRows();
      this.readAt = performance.now();
      if (this.writing > 0) return;
      const before = this.lines[0];
      this.newestRow = entries[0];
      this.lines = entries.map(lineOf);
      const after = this.lines[0];
      if (after !== undefined && (after.seq !== before?.seq || after.repeats !== before.repeats)) this.newestChanged(false);
    } catch (err) {
      this.opts.onError(err);
    }
  }

  /** A standby's copy, read again when older than `maxAgeMs` (default `freshMs`: before a page or /status is drawn). */
  async fresh(maxAgeMs = this.opts.freshMs ?? 2_000): Promise<void> {
    if (!this.opts.follows() || performance.now() < this.followedUntil) return;
    if (performance.now() - this.readAt > maxAgeMs) await this.load();
  }

  /** A standby's copy read again now, whatever a heads read said: what a gate decides on (promotion reads the rows as they are). */
  async reread(): Promise<void> {
    if (this.opts.follows()) await this.load();
  }

  /**
   * A standby's heads read (standby-heads.ts): the newest run row's place, read with every other
   * followed environment's. The rows are read again only when it moved; else the copy stands,
   * for `validMs`, as a read of its own.
   */
  async followHead(head: { readonly seq: number; readonly repeats: number } | undefined, validMs: number): Promise<void> {
    if (!this.opts.follows()) return;
    const held = this.lines[0];
    const same = head === undefined ? held === undefined : held !== undefined && held.seq === head.seq && held.repeats === head.repeats;
    if (!same) await this.load();
    if (same || performance.now() - this.readAt < validMs) this.followedUntil = performance.now() + validMs;
  }

  runStarted(reason: string): void {
    this.tell({ running: true, reason, startedAt: new Date().toISOString(), done: 0, total: 0, seq: this.state.seq });
  }

  /** A progress sink for the apply of the run in progress. */
  progress(): Progress {
    return {
      start: (total) => this.tell({ ...this.state, total, done: 0 }),
      done: (id, outcome) => this.tell({ ...this.state, done: this.state.done + 1, last: `${id} ${outcome}` }),
      stop: () => undefined,
    };
  }

  /** Reads the rows the state holds (at start): a run's row carries the last success on from them. */
  start(): void {
    this.tail = this.load();
  }

  /** A run ended: shown, then written to the state, in the order asked. A standby's turn writes nothing: it reads the leader's runs. */
  runFinished(report: RunReport, plan: Plan | undefined): void {
    if (report.result === "standby") {
      // read again unless a heads read (standby-heads.ts) said it stands
      if (this.opts.follows() && performance.now() >= this.followedUntil) void this.load();
      return;
    }
    const changes = (plan?.changes ?? []).filter((c) => c.action !== "no-op").map((c) => ({ id: c.id, action: c.action }));
    this.writing += 1;
    this.tail = this.tail.then(() => this.append(report, changes));
  }

  /** Shows the run (folded into the newest when quiet), appends its row, and shows the row as written (its place in the state). */
  private async append(report: RunReport, changes: RunRecord["changes"]): Promise<void> {
    try {
      const record = this.recordOf(report, changes);
      const foldKey = repeated.has(report.result) && changes.length === 0 ? `run:${report.result}:${report.revision ?? ""}` : undefined;
      const newest = this.lines[0];
      const folds =
        foldKey !== undefined && newest?.record.outcome === report.result && newest.record.revision === report.revision && newest.record.counts.changes === 0;
      const shown: RunEntry = folds
        ? { seq: newest.seq, firstAt: newest.firstAt, record, repeats: newest.repeats + 1, lastAt: report.finishedAt }
        : { seq: (newest?.seq ?? 0) + 1, record, repeats: 0, firstAt: report.startedAt, lastAt: report.finishedAt };
      const shownLine = lineOf(shown);
      this.newestRow = shown;
      this.lines = [shownLine, ...this.lines.slice(folds ? 1 : 0)].slice(0, this.window);
      this.newestChanged(true);
      const stored = runEntryOf(await this.opts.store.appendHistory({ record, ...(foldKey === undefined ? {} : { foldKey }) }, this.opts.bound()));
      if (stored !== undefined && this.newestRow === shown) this.newestRow = stored;
      if (stored !== undefined) this.lines = this.lines.map((e) => (e === shownLine ? lineOf(stored) : e));
      if (this.lines[0]?.seq !== this.state.seq) this.newestChanged(false);
    } catch (err) {
      this.opts.onError(err);
    } finally {
      this.writing -= 1;
    }
  }

  /** Every row written that was asked for (tests, and a daemon stopping). */
  settled(): Promise<void> {
    return this.tail.then(() => undefined);
  }

  private recordOf(report: RunReport, changes: RunRecord["changes"]): RunRecord {
    const lastSuccess = successes.has(report.result) ? { at: report.finishedAt, revision: report.revision, commit: report.commit } : this.lastSuccess();
    const unhealthy = unhealthyOf(report);
    const checkFailures = checkFailuresOfReport(report);
    return {
      kind: "run",
      trigger: report.reason,
      outcome: report.result,
      ...(report.revision === undefined ? {} : { revision: report.revision }),
      ...(report.commit === undefined ? {} : { commit: report.commit }),
      ...(report.author === undefined ? {} : { author: report.author }),
      ...(report.subject === undefined ? {} : { subject: report.subject }),
      counts: countsOf(report, changes.length),
      durationMs: report.durationMs,
      startedAt: report.startedAt,
      finishedAt: report.finishedAt,
      replica: this.opts.replica,
      synced: report.synced ?? false,
      ...(lastSuccess === undefined ? {} : { lastSuccess }),
      report: boundReport(report),
      changes: changes.slice(0, maxListed),
      ...(unhealthy.length === 0 ? {} : { unhealthy }),
      ...(checkFailures.length === 0 ? {} : { checkFailures }),
    };
  }

  /** The changes of one resource in the newest rows (read from the state), newest first; undefined when they cannot be read. */
  async historyOf(id: string): Promise<readonly ResourceHistoryItem[] | undefined> {
    const rows = await this.rows();
    if (rows === undefined) return undefined;
    const items: ResourceHistoryItem[] = [];
    for (const run of rows) {
      const change = run.record.changes.find((c) => c.id === id);
      if (change === undefined) continue;
      const r = run.record;
      items.push({ seq: run.seq, at: r.startedAt, commit: r.commit ?? r.revision, action: change.action, outcome: outcomeOf(r.report, id, change.action) });
    }
    return items;
  }

  /** Listens to the run in progress; returns the way to stop listening. */
  subscribe(listener: LiveListener): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  get listenerCount(): number {
    return this.listeners.size;
  }

  /** Tells the listeners the newest run's place (`ended`: the run in progress ended with it). */
  private newestChanged(ended: boolean): void {
    const newest = this.newestRow;
    const seq = newest?.seq ?? 0;
    this.tell(ended || !this.state.running ? { running: false, done: 0, total: 0, seq } : { ...this.state, seq });
    if (newest !== undefined) this.opts.onNewest?.(newest, this.lastSuccess());
  }

  private tell(state: LiveState): void {
    this.state = state;
    for (const listener of this.listeners) listener(state);
  }
}
