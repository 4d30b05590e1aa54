/**
 * Verification of an environment's revisions (docs/user/promotion.md), on the replica that leads
 * it: after each run, the rule of promote/verification.ts over the runs its history holds; a
 * revision whose healthy runs span `soak` gets a verification row in the environment's state
 * (once), and the environments promoted from it are told; while a soak runs, a run is asked for
 * at its end (a noop run when nothing changed), which sees it through.
 */
import type { Logger } from "../logger.js";
import { soakEndsAt, soaked, standingOf, streakOf, verdictOf, withdrawalDue } from "./verification.js";
import type { RunFact, RunOutcome, VerificationFact } from "./verification.js";
import { boundText } from "../text/bounded-text.js";
import type { HistoryBound } from "../config/history-section.js";
import type { HistoryStore } from "../record/history/history.js";
import { readVerifications } from "../record/history/promotion-history.js";
import type { VerificationRecord } from "../record/history/promotion-history.js";
import type { HistoryEntry, HistoryRecord } from "../record/history/history.js";

/**
 * A run row as promotion reads it: its outcome, where it ran and when. Structural, so promotion
 * needs nothing of the daemon: the daemon's run history holds such rows (daemon/history/run-record.ts: `RunLine`).
 */
export type RunRow = HistoryEntry<HistoryRecord & RunOutcome & { readonly commit?: string; readonly author?: string; readonly subject?: string }>;

/** A verification row as the rules read it (a withdrawal carries its reason). */
export function verificationFactOf(entry: HistoryEntry<VerificationRecord>): VerificationFact {
  const r = entry.record;
  return { revision: r.revision, at: Date.parse(r.finishedAt), ...(r.withdrawn === undefined ? {} : { withdrawn: r.withdrawn.reason }) };
}

/** Characters of a withdrawal's reason a row keeps. */
const maxReasonChars = 2_000;

/** A run row as the rules read it: a row with quiet repeats began with its first run. */
export function runFactOf(entry: RunRow): RunFact {
  const r = entry.record;
  const firstAt = entry.repeats > 0 ? Date.parse(entry.firstAt) : Date.parse(r.finishedAt);
  return {
    revision: r.revision,
    firstAt,
    lastAt: Date.parse(entry.lastAt),
    ...verdictOf(r),
  };
}

/** Where the newest revision stands: soaking, verified, failing (its newest telling run failed), none (no telling run yet). */
export type VerificationState = "none" | "soaking" | "verified" | "failing";

/** What a verifier tells its metrics (daemon/metrics/metrics.ts). */
export interface VerificationObserver {
  /** A row written: a grant or a withdrawal. */
  written(result: "verified" | "withdrawn"): void;
  /** After each check where it leads; `soakEndsAt` (ms since the epoch) while soaking. */
  state(state: VerificationState, soakEndsAt?: number): void;
  /** Not judged here (another replica leads, or promotion reads nothing of the environment). */
  cleared(): void;
}

export interface VerifierOptions {
  readonly state: HistoryStore;
  readonly bound: () => HistoryBound;
  readonly soakMs: () => number;
  /** The environment's runs, newest first, once the newest is written. */
  readonly runs: () => Promise<readonly RunRow[]>;
  readonly leads: () => boolean;
  /** Asks the environment's loop for a run (the soak's end). */
  readonly trigger: (reason: string) => void;
  /** A revision was verified: the environments promoted from this one may take it. */
  readonly onVerified: (revision: string) => void;
  readonly logger: Logger;
  readonly observe?: VerificationObserver;
}

export class Verifier {
  private timer: NodeJS.Timeout | undefined;
  private checking: Promise<void> = Promise.resolve();

  constructor(private readonly opts: VerifierOptions) {}

  /** After a run: judged in turn (one check at a time: a row is never written twice). */
  runEnded(): void {
    this.checking = this.checking
      .then(() => this.check())
      .catch((err: unknown) => this.opts.logger.warn({ err: (err as Error).message }, "verification not written: judged again after the next run"));
  }

  /** Every check asked for is done (tests). */
  settled(): Promise<void> {
    return this.checking;
  }

  private async check(): Promise<void> {
    if (!this.opts.leads()) {
      this.opts.observe?.cleared();
      return;
    }
    const runs = await this.opts.runs();
    const facts = runs.map(runFactOf);
    const rows = (await readVerifications(this.opts.state, 50)).map(verificationFactOf);
    const withdrawal = withdrawalDue(facts, rows);
    if (withdrawal !== undefined) await this.withdraw(withdrawal, runs);
    const streak = streakOf(facts);
    if (streak === undefined) {
      // a failing run resets the soak: no run is asked for at the end of one that no longer runs
      clearTimeout(this.timer);
      this.opts.observe?.state(facts.some((f) => f.verdict !== "neutral") ? "failing" : "none");
      return;
    }
    const soakMs = this.opts.soakMs();
    if (!soaked(streak, soakMs)) {
      this.wakeAt(soakEndsAt(streak, soakMs));
      this.opts.observe?.state("soaking", soakEndsAt(streak, soakMs));
      return;
    }
    this.opts.observe?.state("verified");
    const granted = standingOf(rows).find((v) => v.revision === streak.revision);
    if (granted !== undefined && granted.at >= streak.since) return;
    const run = runs.find((e) => e.record.revision === streak.revision)?.record;
    const record: VerificationRecord = {
      kind: "verification",
      revision: streak.revision,
      ...(run?.commit === undefined ? {} : { commit: run.commit }),
      ...(run?.author === undefined ? {} : { author: run.author }),
      ...(run?.subject === undefined ? {} : { subject: run.subject }),
      soakMs,
      startedAt: new Date(streak.since).toISOString(),
      finishedAt: new Date().toISOString(),
    };
    await this.opts.state.appendHistory({ record }, this.opts.bound());
    this.opts.logger.info({ revision: streak.revision, soakMs }, "revision verified: a candidate for the environments promoted from this one");
    this.opts.observe?.written("verified");
    this.opts.onVerified(streak.revision);
  }

  /** A later run of a verified revision failed: its verification is withdrawn, a row of the history. */
  private async withdraw(withdrawal: { revision: string; reason: string }, runs: readonly RunRow[]): Promise<void> {
    const run = runs.find((e) => e.record.revision === withdrawal.revision)?.record;
    const now = new Date().toISOString();
    const record: VerificationRecord = {
      kind: "verification",
      revision: withdrawal.revision,
      ...(run?.commit === undefined ? {} : { commit: run.commit }),
      soakMs: this.opts.soakMs(),
      withdrawn: { reason: boundText(withdrawal.reason, maxReasonChars) },
      startedAt: run?.startedAt ?? now,
      finishedAt: now,
    };
    await this.opts.state.appendHistory({ record }, this.opts.bound());
    this.opts.observe?.written("withdrawn");
    this.opts.logger.warn({ revision: withdrawal.revision, reason: record.withdrawn!.reason }, "verification withdrawn: a later run of the revision failed");
  }

  /** One run asked for at the soak's end (a later one replaces it). */
  private wakeAt(at: number): void {
    clearTimeout(this.timer);
    // a little after the end: the run's own end is then surely past it
    this.timer = setTimeout(() => this.opts.trigger("soak"), Math.max(0, at - Date.now()) + 50);
    this.timer.unref();
  }

  stop(): void {
    clearTimeout(this.timer);
  }
}
