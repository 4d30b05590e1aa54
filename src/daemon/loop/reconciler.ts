/**
 * The reconcile loop of `gatesync run`: every interval (with jitter) and on every trigger, fetch → load → validate → plan → apply → record.
 *
 * - A commit that does not validate applies nothing; its errors show in the status and the last good commit stays in force.
 * - Nothing happens — no HTTP call to the interfaces — when the revision, the config and the state's serial are unchanged since the
 *   last successful run (run-basis.ts: a state another process wrote is planned and re-asserted), no re-assert is due and nothing is left to retry.
 * - A held environment (frozen, or outside its sync window: hold.ts) plans and applies nothing (held-run.ts).
 * - One bad resource or lost database session (57P01) never stops the loop: a failed run, retried sooner (backoff); runLoop logs a run that throws.
 * - Stopping aborts the apply (no new calls start), lets calls in flight finish and waits for the run to record them.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { linkedSignal } from "../../abort-signals.js";
import { runApply } from "../../run/run-apply.js";
import { applySucceeded, statusCounts } from "../../apply/summary.js";
import type { GatesyncConfig } from "../../config/config.js";
import { implicitEnvironmentName } from "../../config/environments.js";
import { GatesyncError, ValidationFailed } from "../../errors.js";
import type { Logger } from "../../logger.js";
import { newDesiredMemo } from "../../plan/desired.js";
import type { Plan } from "../../plan/plan.js";
import type { SourceSnapshot } from "../../source/source.js";
import { skippedRun } from "./run-basis.js";
import { currentDigest, ownershipBasis } from "./ownership-basis.js";
import type { RunBasis, RunMemory } from "./run-basis.js";
import { blockedFields, metricResult, refusedCommitFields, runFinishedFields } from "./run-log.js";
import type { RunReport, RunResult } from "../../run/run-report.js";
import { whereOf } from "../history/run-record.js";
import type { ReconcilerOptions } from "./reconciler-options.js";
import { heldReport } from "../hold/held-run.js";
import type { RepositorySettings } from "../environments/repository-settings.js";
import { inRunSpan } from "./run-span.js";
import { scheduleDelay } from "./schedule-delay.js";
import { CommitsBehind, LatestSnapshot, autoPromoteThenFetch, endOnFetchFailure } from "./run-source.js";

/** Ends a run with its result (Reconciler.finish). */
type Finish = (result: RunResult, extra?: Partial<RunReport>) => RunReport;

/** A run while it goes: when it started, and its plan once there is one. */
interface RunInProgress {
  readonly reason: string;
  readonly started: Date;
  readonly t0: number;
  plan: Plan | undefined;
}

export class Reconciler {
  private readonly log: Logger;
  private stopping = false;
  private readonly abort = new AbortController();
  /** Aborts the run in progress only (lost leadership). */
  private runAbort: AbortController | undefined;
  private wake: (() => void) | undefined;
  private pendingReason: string | undefined;
  /** The W3C `traceparent` of the trigger the next run answers (run-span.ts). */
  private pendingTraceparent: string | undefined;
  private running: Promise<RunReport> | undefined;
  private loop: Promise<void> | undefined;
  private consecutiveFailures = 0;
  /** Prepared resources of earlier runs: a run after a small change prepares what changed. */
  private readonly desiredMemo = newDesiredMemo();
  private lastReassert = Date.now();
  /** The last run that applied everything of a valid revision. */
  lastGood: (RunBasis & { readonly commit?: string; readonly at: string }) | undefined;
  lastRun: RunReport | undefined;
  /** The last run that found the repository invalid, while it is still the newest revision. */
  lastInvalid: RunReport | undefined;
  private readonly latest = new LatestSnapshot();
  private readonly behind = new CommitsBehind(
    () => this.opts.source,
    (n) => this.opts.metrics.setCommitsBehind(n),
  );
  /** When the next scheduled run is due (ISO time), while waiting for it. */
  nextRunAt: string | undefined;
  /** The newest revision is applied in full: the last run applied everything or had nothing to do. */
  synced = false;
  /** Blocked changes left by the last apply. */
  private blockedLeft = 0;

  /** The config in force (replaced by a reload of gatesync.yaml) and its hash. */
  private config: GatesyncConfig;
  private configHash: string;

  constructor(private readonly opts: ReconcilerOptions) {
    this.log = opts.logger.child({ component: "reconciler" });
    this.config = opts.config;
    this.configHash = opts.configHash;
  }

  /** The newest fetched source (its files kept while it is): what the next run would apply. */
  get lastSnapshot(): SourceSnapshot | undefined {
    return this.latest.snapshot;
  }

  /** The config in force and its hash. */
  get configInForce(): { readonly config: GatesyncConfig; readonly hash: string } {
    return { config: this.config, hash: this.configHash };
  }

  /** Puts a reloaded config in force for the next runs (a changed hash makes the next run apply), and runs. */
  reconfigure(config: GatesyncConfig, hash: string): void {
    this.config = config;
    this.configHash = hash;
    this.trigger("config change");
  }

  /** Runs now, then every interval, until stopped. */
  start(): void {
    // asked before the loop started (a lease taken in the leases' first round): the first run is that run
    this.pendingReason = undefined;
    this.opts.source.watch?.(() => this.trigger("file change"));
    this.loop = this.runLoop();
  }

  /** Asks for a run as soon as possible (coalesced with one already asked for). */
  trigger(reason: string, traceparent?: string): void {
    if (this.pendingReason === undefined) this.pendingTraceparent = traceparent;
    this.pendingReason ??= reason;
    this.wake?.();
  }

  private async runLoop(): Promise<void> {
    let reason = "start";
    while (!this.stopping) {
      const traceparent = this.pendingTraceparent;
      this.pendingTraceparent = undefined;
      await this.runOnce(reason, traceparent).catch((err: unknown) => this.log.error({ err: (err as Error).message }, "run failed"));
      if (this.stopping) break;
      const delay = this.nextDelay();
      if (this.pendingReason === undefined) {
        this.nextRunAt = new Date(Date.now() + delay).toISOString();
        // a trigger aborts this wait, clearing its timer and listener (a wait merely raced against it stayed pending till the interval's end)
        const woken = new AbortController();
        this.wake = () => woken.abort();
        const waiting = linkedSignal([this.abort.signal, woken.signal]);
        await sleep(delay, undefined, { signal: waiting.signal }).catch(() => undefined);
        waiting.unlink();
        this.wake = undefined;
        this.nextRunAt = undefined;
      }
      reason = this.pendingReason ?? "schedule";
      this.pendingReason = undefined;
    }
  }

  private nextDelay(): number {
    return scheduleDelay(this.config.schedule, this.consecutiveFailures, this.opts);
  }

  /** One run; concurrent callers share the run in progress. */
  runOnce(reason: string, traceparent?: string): Promise<RunReport> {
    const slot = this.opts.runSlot;
    const cause = { reason, environment: this.config.environment ?? implicitEnvironmentName, traceparent };
    const execute = async (): Promise<RunReport> => inRunSpan(cause, async () => this.execute(reason));
    this.running ??= (slot === undefined ? execute() : slot(execute)).finally(() => {
      this.running = undefined;
    });
    return this.running;
  }

  private async execute(reason: string): Promise<RunReport> {
    const run: RunInProgress = { reason, started: new Date(), t0: performance.now(), plan: undefined };
    const finish: Finish = (result, extra = {}) => this.finish(run, result, extra);
    if (this.opts.canApply !== undefined && !this.opts.canApply()) return finish("standby");
    const runAbort = (this.runAbort = new AbortController());
    // `promotion: auto` first, a step of its own (promotion/auto-promotion.ts): the fetch reads the promotion in force
    const snapshot = await autoPromoteThenFetch(this.opts, reason, this.log).catch(endOnFetchFailure(finish));
    if (!("root" in snapshot)) return snapshot;
    // the revision's files stay for this run, however far the source moves meanwhile (revision-trees.ts)
    const release = snapshot.hold?.();
    this.latest.keep(snapshot);
    try {
      const report = await this.runSnapshot(run, snapshot, runAbort, finish);
      // counted once the run ended (a git process: starting it would hold the loop ~3 ms of the run); an applied head is 0 already
      if (report.result !== "applied") this.behind.note(this.lastGood?.commit, snapshot.commit);
      return report;
    } finally {
      release?.();
    }
  }

  /** A run of one fetched snapshot: its team settings, the skip decision, then the apply. */
  private async runSnapshot(run: RunInProgress, snapshot: SourceSnapshot, runAbort: AbortController, finish: Finish): Promise<RunReport> {
    // a newer revision is not applied yet: not synced until a run applies it (also while it runs)
    if (this.lastGood !== undefined && this.lastGood.revision !== snapshot.revision) this.markSynced(false);
    const log = this.log.child({ commit: snapshot.commit ?? snapshot.revision });
    const where = whereOf(snapshot);
    let effective: { readonly config: GatesyncConfig; readonly settings: RepositorySettings } | undefined;
    try {
      effective = await this.opts.teamSettings?.read(this.config, snapshot);
    } catch (err) {
      return this.failed(err, where, log, finish);
    }
    const [team, config] = [effective?.settings, effective?.config ?? this.config];
    // what the repository writes that the daemon ignores: on every report of the commit (the log has it once)
    const reported: Finish = (result, extra = {}) =>
      finish(result, { ...(team === undefined || team.ignored.length === 0 ? {} : { ignoredSettings: team.ignored }), ...extra });
    const reassertEvery = this.config.schedule.reassertIntervalMs;
    const reassert = reassertEvery !== undefined && Date.now() - this.lastReassert >= reassertEvery;
    const teamHash = team?.hash ?? "";
    const skip = await skippedRun(
      this.memory(),
      { revision: snapshot.revision, teamHash, reason: run.reason, reassert },
      { log, notSynced: () => this.markSynced(false) },
    );
    if (skip === "noop") return reported("noop", where);
    if (skip === "invalid") {
      // the same broken revision: its errors are already reported
      const diagnostics = this.lastInvalid?.diagnostics;
      return reported("invalid", { revision: snapshot.revision, ...(diagnostics === undefined ? {} : { diagnostics }) });
    }
    // unlinked when the run ends: the daemon's own signal outlives every run
    const linked = linkedSignal([this.abort.signal, runAbort.signal]);
    try {
      const held = await heldReport(this.opts, { config, snapshot, log });
      if (held !== undefined) return reported("frozen", held);
      return await this.applyRevision(run, snapshot, { log, signal: linked.signal, reassert, config, teamHash }, reported);
    } catch (err) {
      return this.failed(err, where, log, reported);
    } finally {
      linked.unlink();
    }
  }

  /** What the skip decision judges a run by (run-basis.ts). */
  private memory(): RunMemory {
    const [r, good, failures] = [this.opts.ownership, this.lastGood, this.consecutiveFailures];
    const owners = r === undefined ? {} : { ownership: async () => currentDigest(r, good?.watched ?? []) };
    return { lastGood: good, lastInvalid: this.lastInvalid?.revision, failures, configHash: this.configHash, state: this.opts.state, ...owners };
  }

  /** A run that failed: an invalid revision keeps its findings (and is not retried until it changes), any other error is logged. */
  private failed(err: unknown, where: { revision: string; commit?: string }, log: Logger, finish: Finish): RunReport {
    if (err instanceof ValidationFailed) {
      log.error(refusedCommitFields(err.diagnostics), "revision is invalid: nothing applied; the last good commit stays in force");
      const report = finish("invalid", { ...where, diagnostics: err.diagnostics, error: err.message });
      this.lastInvalid = report;
      return report;
    }
    const message = err instanceof GatesyncError ? `${err.code}: ${err.message}` : (err as Error).message;
    log.error({ err: message }, "run failed");
    return finish("error", { ...where, error: message });
  }

  /** Validates, plans and applies one fetched revision; its metrics and the last good commit follow the outcome. */
  private async applyRevision(
    run: RunInProgress,
    snapshot: SourceSnapshot,
    how: { readonly log: Logger; readonly signal: AbortSignal; readonly reassert: boolean; readonly config: GatesyncConfig; readonly teamHash: string },
    finish: Finish,
  ): Promise<RunReport> {
    const { log, reassert } = how;
    const where = whereOf(snapshot);
    log.info({ reason: run.reason, reassert }, "run started");
    this.opts.observer?.runStarted(run.reason);
    this.opts.onRunStart?.(where);
    const result = await runApply({
      config: how.config,
      root: snapshot.root,
      boundary: snapshot.boundary,
      validator: this.opts.validator,
      state: this.opts.state,
      ...(this.opts.ownership === undefined ? {} : { ownership: this.opts.ownership }),
      env: this.opts.env,
      // the apply's own logger adds a git commit to its lines: not twice
      logger: snapshot.commit === undefined ? log : this.log,
      dispatcher: this.opts.dispatcher,
      ...(snapshot.commit === undefined ? {} : { commit: snapshot.commit }),
      signal: how.signal,
      observe: (e) => this.opts.metrics.observeCall(e),
      reassert,
      recheck: reassert || run.reason === "soak",
      desiredMemo: this.desiredMemo,
      lockOwner: "gatesync run (daemon)",
      ...(this.opts.pacers === undefined ? {} : { pacers: this.opts.pacers }),
      ...(this.opts.observer === undefined ? {} : { progress: this.opts.observer.progress() }),
    });
    run.plan = result.plan;
    const mass = result.plan.massDeactivation;
    // nothing was switched off: a person decides (deactivationGuard.allowCommit lifts it for this commit)
    if (mass !== undefined)
      log.warn({ withheld: mass.withheld, of: mass.of, maxShare: mass.maxShare, allowWith: "deactivationGuard.allowCommit" }, "mass deactivation withheld");
    if (!("summary" in result)) return finish("error", { ...where, error: "apply declined" });
    const summary = result.summary;
    if (reassert) this.lastReassert = Date.now();
    this.blockedLeft = summary.blocked.length;
    this.opts.metrics.setResources({ ...statusCounts(result.run.state, summary), blocked: summary.blocked.length });
    this.lastInvalid = undefined;
    const ok = applySucceeded(summary);
    if (ok) {
      const basis = { configHash: this.configHash, teamHash: how.teamHash, state: result.stateAfter, ...ownershipBasis(result.run) };
      this.lastGood = { ...where, ...basis, at: new Date().toISOString() };
      this.behind.applied();
      this.opts.metrics.setCommit(snapshot.commit ?? snapshot.revision);
    }
    if (summary.blocked.length > 0) log.warn(blockedFields(result.plan), "changes blocked: not applied until a person acts");
    log.info(runFinishedFields(summary), "run finished");
    const rules = result.run.ruleFindings;
    return finish(ok ? "applied" : "partial", { ...where, plan: result.plan.summary, summary, ...(rules.length === 0 ? {} : { ruleFindings: rules }) });
  }

  /** Ends a run: its report, metrics, the failure count that paces retries, and whether all is synced. */
  private finish(run: RunInProgress, result: RunResult, extra: Partial<RunReport>): RunReport {
    const durationMs = Math.round(performance.now() - run.t0);
    const label = metricResult(result, extra.summary);
    this.opts.metrics.runFinished(label, durationMs / 1000);
    const failing = result === "partial" || result === "error" || result === "source-error";
    this.consecutiveFailures = failing ? this.consecutiveFailures + 1 : 0;
    // blocked changes are part of the repository no apply will make: not synced while they remain;
    // a standby's turn says nothing of it (its history follows the leader's runs: shared-history.ts)
    if (result !== "standby") this.markSynced((result === "applied" || result === "noop") && this.blockedLeft === 0);
    const [startedAt, finishedAt, synced] = [run.started.toISOString(), new Date().toISOString(), result === "standby" ? {} : { synced: this.synced }];
    const report: RunReport = { reason: run.reason, startedAt, finishedAt, durationMs, result, ...extra, ...synced };
    this.lastRun = report;
    this.opts.onRun?.(report, run.plan);
    return report;
  }

  private markSynced(synced: boolean): void {
    this.synced = synced;
    this.opts.metrics.setSynced(synced);
  }

  /** Stops the run in progress from starting further calls (this replica lost its leadership). */
  interrupt(): void {
    this.runAbort?.abort();
  }

  /** A validation of this daemon's runs past its limit (RepositoryValidator.overdue): /healthz fails with it. */
  get validationOverdue(): { readonly forMs: number; readonly limitMs: number } | undefined {
    return this.opts.validator.overdue();
  }

  /** Stopping (readiness turns off). */
  get isStopping(): boolean {
    return this.stopping;
  }

  /** Stops starting work, lets calls in flight finish (bounded), and waits for the run. */
  async stop(): Promise<void> {
    this.stopping = true;
    this.abort.abort();
    this.wake?.();
    const timeout = this.opts.shutdownTimeoutMs ?? 15_000;
    // eslint-disable-next-line no-restricted-syntax -- two promises of this process, no calls; the timer unreferenced: once the run is done it must not keep the process alive
    await Promise.race([Promise.allSettled([this.running, this.loop]), sleep(timeout, undefined, { ref: false })]);
    this.latest.drop();
    await this.opts.source.close();
  }
}
