/**
 * What the status page knows beyond the state: the last runs of this daemon (newest first),
 * each resource's changes by commit in those runs, and the run in progress, told to live
 * listeners (server-sent events) as it goes.
 */
import type { Progress } from "../../apply/executor.js";
import type { Plan } from "../../plan/plan.js";
import type { Action } from "../../plan/plan-change.js";
import type { RunReport } from "../../apply/run-report.js";

export interface RunEntry {
  readonly seq: number;
  readonly report: RunReport;
  /** Changes the run planned (no-ops left out). */
  readonly changes: ReadonlyArray<{ readonly id: string; readonly action: Action }>;
  /** Further runs with the same outcome and nothing to do, folded into this one. */
  readonly repeats: number;
  readonly lastAt: string;
}

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

/** Runs whose report says nothing happened: folded together so they do not push real runs out. */
const quiet = new Set(["noop", "standby"]);

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

export class RunHistory {
  private readonly runs: RunEntry[] = [];
  private readonly listeners = new Set<LiveListener>();
  private seq = 0;
  private state: LiveState = { running: false, done: 0, total: 0, seq: 0 };

  constructor(private readonly limit = 50) {}

  get live(): LiveState {
    return this.state;
  }

  /** Newest first. */
  entries(): readonly RunEntry[] {
    return this.runs;
  }

  runStarted(reason: string): void {
    this.tell({ running: true, reason, startedAt: new Date().toISOString(), done: 0, total: 0, seq: this.seq });
  }

  /** A progress sink for the apply of the run in progress. */
  progress(): Progress {
    return {
      start: (total) => this.tell({ ...this.state, total, done: 0 }),
      done: (id, outcome) => this.tell({ ...this.state, done: this.state.done + 1, last: `${id} ${outcome}` }),
      stop: () => undefined,
    };
  }

  runFinished(report: RunReport, plan: Plan | undefined): void {
    const changes = (plan?.changes ?? []).filter((c) => c.action !== "no-op").map((c) => ({ id: c.id, action: c.action }));
    const newest = this.runs[0];
    if (
      quiet.has(report.result) &&
      changes.length === 0 &&
      newest !== undefined &&
      newest.report.result === report.result &&
      newest.report.revision === report.revision
    ) {
      this.runs[0] = { ...newest, repeats: newest.repeats + 1, lastAt: report.finishedAt };
    } else {
      this.seq += 1;
      this.runs.unshift({ seq: this.seq, report, changes, repeats: 0, lastAt: report.finishedAt });
      this.runs.splice(this.limit);
    }
    this.tell({ running: false, done: 0, total: 0, seq: this.seq });
  }

  /** The changes of one resource in the runs kept, newest first. */
  historyOf(id: string): readonly ResourceHistoryItem[] {
    const items: ResourceHistoryItem[] = [];
    for (const run of this.runs) {
      const change = run.changes.find((c) => c.id === id);
      if (change === undefined) continue;
      items.push({
        seq: run.seq,
        at: run.report.startedAt,
        commit: run.report.commit ?? run.report.revision,
        action: change.action,
        outcome: outcomeOf(run.report, id, change.action),
      });
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

  private tell(state: LiveState): void {
    this.state = state;
    for (const listener of this.listeners) listener(state);
  }
}
