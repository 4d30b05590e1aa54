/**
 * Prometheus metrics of the daemon (prom-client), on a registry of its own. prom-client's
 * process metrics carry their own `process_` (gatesync_process_cpu_seconds_total).
 *
 * A daemon serving several environments labels every metric of a run with `environment`
 * (`new DaemonMetrics({ environments: true })`); each environment's reconciler writes through
 * its own `RunMetrics` (`metrics.for(name)`). A single environment's metrics carry no such
 * label, as before environments existed.
 */
import { Gauge, Registry, collectDefaultMetrics } from "prom-client";
import type { Counter, Histogram } from "prom-client";
import { promotionInstruments, runInstruments, statusInstruments } from "./metric-instruments.js";
import type { CallEvent } from "../../apply/types.js";
import type { PromotionOutcome } from "../../promotion/promotion.js";
import type { VerificationObserver, VerificationState } from "../../promotion/verifier.js";

/** What one environment's reconcile loop writes. */
export interface RunMetrics {
  observeCall(e: CallEvent): void;
  runFinished(result: string, seconds: number): void;
  setResources(counts: Record<string, number>): void;
  setLastSuccess(seconds: number): void;
  setCommitsBehind(n: number): void;
  setCommit(commit: string): void;
  setSynced(synced: boolean): void;
  setLeader(leader: boolean): void;
}

export class DaemonMetrics implements RunMetrics {
  readonly registry = new Registry();
  readonly runDuration: Histogram;
  readonly runs: Counter;
  readonly resources: Gauge;
  readonly calls: Counter;
  readonly batchSize: Histogram;
  readonly queueDepth: Gauge;
  readonly interfaceRate: Gauge;
  readonly lastSuccess: Gauge;
  readonly commit: Gauge;
  readonly leader: Gauge;
  readonly commitsBehind: Gauge;
  readonly lastSuccessAge: Gauge;
  readonly synced: Gauge;
  readonly leaderless: Gauge;
  /** 1 while the environment is frozen (`kind="freeze"`) or outside its sync window (`kind="window"`): it applies and promotes nothing. */
  readonly held: Gauge;
  readonly promotions: Counter;
  readonly verifications: Counter;
  readonly verificationState: Gauge;
  readonly soakRemaining: Gauge;
  private readonly soakEnds: ReturnType<typeof promotionInstruments>["soakEnds"];

  /** `["environment"]` when the daemon serves several environments. */
  private readonly env: string[];
  /** The commit each environment's gatesync_commit_info names now (a new one replaces it). */
  private readonly commits = new Map<string, string>();
  private unlabelled: RunMetrics | undefined;

  constructor(options: { readonly environments?: boolean } = {}) {
    const registers = [this.registry];
    const env = (this.env = options.environments === true ? ["environment"] : []);
    collectDefaultMetrics({ register: this.registry, prefix: "gatesync_" });
    const run = runInstruments(registers, env);
    ({ runDuration: this.runDuration, runs: this.runs, resources: this.resources, calls: this.calls } = run);
    ({ batchSize: this.batchSize, queueDepth: this.queueDepth, interfaceRate: this.interfaceRate } = run);
    const status = statusInstruments(registers, env);
    ({ lastSuccess: this.lastSuccess, commitsBehind: this.commitsBehind, lastSuccessAge: this.lastSuccessAge, commit: this.commit } = status);
    ({ leader: this.leader, synced: this.synced, leaderless: this.leaderless } = status);
    const help = "1 while the environment is held — frozen (kind=freeze) or outside its sync window (kind=window) — applying and promoting nothing";
    this.held = new Gauge({ name: "gatesync_environment_held", help, labelNames: ["kind", ...env], registers });
    const promotion = promotionInstruments(registers, env);
    ({ promotions: this.promotions, verifications: this.verifications, verificationState: this.verificationState } = promotion);
    ({ soakRemaining: this.soakRemaining, soakEnds: this.soakEnds } = promotion);
  }

  /** A promotion or rollback asked for (a person's, through the promote route, or `promotion: auto`'s) and how it ended. */
  promoted(environment: string, o: PromotionOutcome): void {
    this.promotions.inc({ kind: o.kind, actor: o.actor, result: o.result, ...this.labelsOf(environment) });
  }

  /** What the environment's verifier writes: the rows, and where its newest revision stands. */
  verification(environment: string): VerificationObserver {
    const l = this.labelsOf(environment);
    const states: readonly VerificationState[] = ["none", "soaking", "verified", "failing"];
    return {
      written: (result) => this.verifications.inc({ result, ...l }),
      state: (state, soakEndsAt) => {
        // both results from 0: a rate() sees the first grant or withdrawal
        for (const result of ["verified", "withdrawn"]) this.verifications.inc({ result, ...l }, 0);
        for (const s of states) this.verificationState.set({ state: s, ...l }, s === state ? 1 : 0);
        this.soakEnds.set(environment, { labels: l, at: soakEndsAt ?? 0 });
      },
      cleared: () => {
        for (const s of states) this.verificationState.remove({ state: s, ...l });
        if (this.soakEnds.delete(environment)) this.soakRemaining.remove(l);
      },
    };
  }

  private labelsOf(environment: string): Record<string, string> {
    return this.env.length === 0 ? {} : { environment };
  }

  /** The hold an environment is under now (hold.ts), or none. */
  setHeld(environment: string, kind: "freeze" | "window" | undefined): void {
    const l: Record<string, string> = this.env.length === 0 ? {} : { environment };
    for (const k of ["freeze", "window"]) this.held.set({ kind: k, ...l }, k === kind ? 1 : 0);
  }

  /** Who leads what, as the fleet's lease table says (every replica exports it; undefined: not readable now). */
  setLeaseTable(rows: readonly { readonly environment: string; readonly live: boolean }[] | undefined): void {
    this.leaderless.reset();
    for (const r of rows ?? []) this.leaderless.set({ environment: r.environment }, r.live ? 0 : 1);
  }

  // a daemon of one environment writes these directly
  observeCall(e: CallEvent): void {
    this.single.observeCall(e);
  }
  runFinished(result: string, seconds: number): void {
    this.single.runFinished(result, seconds);
  }
  setResources(counts: Record<string, number>): void {
    this.single.setResources(counts);
  }
  setLastSuccess(seconds: number): void {
    this.single.setLastSuccess(seconds);
  }
  setCommitsBehind(n: number): void {
    this.single.setCommitsBehind(n);
  }
  setCommit(commit: string): void {
    this.single.setCommit(commit);
  }
  setSynced(synced: boolean): void {
    this.single.setSynced(synced);
  }
  setLeader(leader: boolean): void {
    this.single.setLeader(leader);
  }

  private get single(): RunMetrics {
    return (this.unlabelled ??= this.for("default"));
  }

  /** The metrics one environment's loop writes (`environment` unused by a daemon of one environment). */
  for(environment: string): RunMetrics {
    const l: Record<string, string> = this.env.length === 0 ? {} : { environment };
    return {
      observeCall: (e) => {
        this.calls.inc({ interface: e.interface, operation: e.operation, code: e.code, ...l });
        this.queueDepth.set({ interface: e.interface, ...l }, e.queueDepth);
        this.interfaceRate.set({ interface: e.interface, ...l }, e.rate);
        if (e.batchSize !== undefined) this.batchSize.observe(l, e.batchSize);
      },
      runFinished: (result, seconds) => {
        this.runs.inc({ result, ...l });
        this.runDuration.observe({ result, ...l }, seconds);
      },
      setResources: (counts) => {
        if (this.env.length === 0) this.resources.reset();
        else for (const status of ["applied", "failed", "in-doubt", "blocked"]) this.resources.remove({ status, ...l });
        for (const [status, n] of Object.entries(counts)) this.resources.set({ status, ...l }, n);
      },
      setLastSuccess: (seconds) => this.lastSuccess.set(l, seconds),
      setCommitsBehind: (n) => this.commitsBehind.set(l, n),
      setCommit: (commit) => {
        const before = this.commits.get(environment);
        if (this.env.length === 0) this.commit.reset();
        else if (before !== undefined) this.commit.remove({ commit: before, ...l });
        this.commits.set(environment, commit);
        this.commit.set({ commit, ...l }, 1);
      },
      setSynced: (synced) => this.synced.set(l, synced ? 1 : 0),
      setLeader: (leader) => this.leader.set(l, leader ? 1 : 0),
    };
  }
}
