/**
 * Prometheus metrics of the daemon (prom-client), on a registry of its own. prom-client's
 * process metrics carry their own `process_` (gatesync_process_cpu_seconds_total).
 */
import { Counter, Gauge, Histogram, Registry, collectDefaultMetrics } from "prom-client";
import type { CallEvent } from "../apply/types.js";

export class DaemonMetrics {
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

  constructor() {
    const registers = [this.registry];
    collectDefaultMetrics({ register: this.registry, prefix: "gatesync_" });
    this.runDuration = new Histogram({
      name: "gatesync_run_duration_seconds",
      help: "Duration of reconcile runs",
      labelNames: ["result"],
      buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
      registers,
    });
    this.runs = new Counter({
      name: "gatesync_runs_total",
      help: "Reconcile runs by result: applied (changed something), unchanged (succeeded, changed nothing), noop (nothing to do: no run), partial, invalid, error, source-error, standby",
      labelNames: ["result"],
      registers,
    });
    this.resources = new Gauge({ name: "gatesync_resources", help: "Resources in the state by status", labelNames: ["status"], registers });
    this.calls = new Counter({
      name: "gatesync_interface_calls_total",
      help: "HTTP calls to the management interfaces",
      labelNames: ["interface", "operation", "code"],
      registers,
    });
    this.batchSize = new Histogram({ name: "gatesync_batch_size", help: "Sub-requests per batch call", buckets: [1, 5, 10, 25, 50, 100, 250], registers });
    this.queueDepth = new Gauge({ name: "gatesync_queue_depth", help: "Calls waiting or running per interface", labelNames: ["interface"], registers });
    this.interfaceRate = new Gauge({
      name: "gatesync_interface_rate",
      help: "Requests per second the apply allows itself per interface (halved by a 429 without Retry-After, growing back)",
      labelNames: ["interface"],
      registers,
    });
    this.lastSuccess = new Gauge({ name: "gatesync_last_success_timestamp_seconds", help: "Time of the last successful run", registers });
    this.commitsBehind = new Gauge({
      name: "gatesync_commits_behind",
      help: "Commits of the fetched branch head not applied yet (0 once applied; 1 when the count is unknown)",
      registers,
    });
    const lastSuccess = this.lastSuccess;
    const started = Date.now() / 1000;
    this.lastSuccessAge = new Gauge({
      name: "gatesync_last_success_age_seconds",
      help: "Seconds since the last successful run (since the process started, before the first one)",
      registers,
      async collect() {
        const at = (await lastSuccess.get()).values[0]?.value ?? 0;
        this.set(Date.now() / 1000 - (at > 0 ? at : started));
      },
    });
    this.commit = new Gauge({ name: "gatesync_commit_info", help: "The commit in force (value 1)", labelNames: ["commit"], registers });
    this.leader = new Gauge({ name: "gatesync_leader", help: "1 when this replica may apply", registers });
    this.synced = new Gauge({ name: "gatesync_synced", help: "1 when the last run applied the newest revision in full (or had nothing to do)", registers });
  }

  observeCall(e: CallEvent): void {
    this.calls.inc({ interface: e.interface, operation: e.operation, code: e.code });
    this.queueDepth.set({ interface: e.interface }, e.queueDepth);
    this.interfaceRate.set({ interface: e.interface }, e.rate);
    if (e.batchSize !== undefined) this.batchSize.observe(e.batchSize);
  }

  setCommit(commit: string): void {
    this.commit.reset();
    this.commit.set({ commit }, 1);
  }

  setResources(counts: Record<string, number>): void {
    this.resources.reset();
    for (const [status, n] of Object.entries(counts)) this.resources.set({ status }, n);
  }
}
