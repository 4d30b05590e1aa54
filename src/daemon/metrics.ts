/**
 * Prometheus metrics of the daemon (prom-client), on a registry of its own. prom-client's
 * process metrics carry their own `process_` (gatesync_process_cpu_seconds_total).
 *
 * A daemon serving several environments labels every metric of a run with `environment`
 * (`new DaemonMetrics({ environments: true })`); each environment's reconciler writes through
 * its own `RunMetrics` (`metrics.for(name)`). A single environment's metrics carry no such
 * label, as before environments existed.
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { CallEvent } from "../apply/types.js";

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

  /** `["environment"]` when the daemon serves several environments. */
  private readonly env: string[];
  /** The commit each environment's gatesync_commit_info names now (a new one replaces it). */
  private readonly commits = new Map<string, string>();
  private unlabelled: RunMetrics | undefined;

  constructor(options: { readonly environments?: boolean } = {}) {
    const registers = [this.registry];
    const env = (this.env = options.environments === true ? ["environment"] : []);
    collectDefaultMetrics({ register: this.registry, prefix: "gatesync_" });
    this.runDuration = new Histogram({
      name: "gatesync_run_duration_seconds",
      help: "Duration of reconcile runs",
      labelNames: ["result", ...env],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
      registers,
    });
    this.runs = new Counter({
      name: "gatesync_runs_total",
      help: "Reconcile runs by result: applied (changed something), unchanged (succeeded, changed nothing), noop (nothing to do: no run), partial, invalid, error, source-error, standby",
      labelNames: ["result", ...env],
      registers,
    });
    this.resources = new Gauge({ name: "gatesync_resources", help: "Resources in the state by status", labelNames: ["status", ...env], registers });
    this.calls = new Counter({
      name: "gatesync_interface_calls_total",
      help: "HTTP calls to the management interfaces",
      labelNames: ["interface", "operation", "code", ...env],
      registers,
    });
    this.batchSize = new Histogram({
      name: "gatesync_batch_size",
      help: "Sub-requests per batch call",
      labelNames: env,
      buckets: [1, 5, 10, 25, 50, 100, 250],
      registers,
    });
    this.queueDepth = new Gauge({ name: "gatesync_queue_depth", help: "Calls waiting or running per interface", labelNames: ["interface", ...env], registers });
    this.interfaceRate = new Gauge({
      name: "gatesync_interface_rate",
      help: "Requests per second the apply allows itself per interface (halved by a 429 without Retry-After, growing back)",
      labelNames: ["interface", ...env],
      registers,
    });
    this.lastSuccess = new Gauge({ name: "gatesync_last_success_timestamp_seconds", help: "Time of the last successful run", labelNames: env, registers });
    this.commitsBehind = new Gauge({
      name: "gatesync_commits_behind",
      help: "Commits of the fetched branch head not applied yet (0 once applied; 1 when the count is unknown)",
      labelNames: env,
      registers,
    });
    const lastSuccess = this.lastSuccess;
    const started = Date.now() / 1000;
    this.lastSuccessAge = new Gauge({
      name: "gatesync_last_success_age_seconds",
      help: "Seconds since the last successful run (since the process started, before the first one)",
      labelNames: env,
      registers,
      async collect() {
        const values = (await lastSuccess.get()).values;
        if (env.length === 0) {
          const at = values[0]?.value ?? 0;
          this.set(Date.now() / 1000 - (at > 0 ? at : started));
          return;
        }
        for (const v of values) this.set(v.labels, Date.now() / 1000 - (v.value > 0 ? v.value : started));
      },
    });
    this.commit = new Gauge({ name: "gatesync_commit_info", help: "The commit in force (value 1)", labelNames: ["commit", ...env], registers });
    this.leader = new Gauge({
      name: "gatesync_leader",
      help: "1 when this replica may apply (with environments: leads the environment)",
      labelNames: env,
      registers,
    });
    this.synced = new Gauge({
      name: "gatesync_synced",
      help: "1 when the last run applied the newest revision in full (or had nothing to do)",
      labelNames: env,
      registers,
    });
    this.leaderless = new Gauge({
      name: "gatesync_environment_leaderless",
      help: "A fleet's lease table as this replica last read it: 1 when no replica leads the environment (none while it cannot be read)",
      labelNames: ["environment"],
      registers,
    });
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
