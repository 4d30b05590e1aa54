/**
 * The Prometheus instruments of the daemon's metrics (metrics.ts), on its registry; `env` is
 * `["environment"]` when the daemon serves named environments, else empty (a single environment's
 * metrics carry no such label).
 */
import { Counter, Gauge, Histogram } from "prom-client";
import type { Registry } from "prom-client";

/** The instruments a run writes: its duration and result, the resources, the calls and their queues. */
export function runInstruments(registers: Registry[], env: string[]) {
  const runDuration = new Histogram({
    name: "gatesync_run_duration_seconds",
    help: "Duration of reconcile runs",
    labelNames: ["result", ...env],
    buckets: [0.01, 0.05, 0.1, 0.5, 1, 5, 15, 60, 300],
    registers,
  });
  const runs = new Counter({
    name: "gatesync_runs_total",
    help: "Reconcile runs by result: applied (changed something), unchanged (succeeded, changed nothing), noop (nothing to do: no run), partial, invalid, error, source-error, standby",
    labelNames: ["result", ...env],
    registers,
  });
  const resources = new Gauge({ name: "gatesync_resources", help: "Resources in the state by status", labelNames: ["status", ...env], registers });
  const calls = new Counter({
    name: "gatesync_interface_calls_total",
    help: "HTTP calls to the management interfaces",
    labelNames: ["interface", "operation", "code", ...env],
    registers,
  });
  const batchSize = new Histogram({
    name: "gatesync_batch_size",
    help: "Sub-requests per batch call",
    labelNames: env,
    buckets: [1, 5, 10, 25, 50, 100, 250],
    registers,
  });
  const queueDepth = new Gauge({ name: "gatesync_queue_depth", help: "Calls waiting or running per interface", labelNames: ["interface", ...env], registers });
  const interfaceRate = new Gauge({
    name: "gatesync_interface_rate",
    help: "Requests per second the apply allows itself per interface (halved by a 429 without Retry-After, growing back)",
    labelNames: ["interface", ...env],
    registers,
  });
  return { runDuration, runs, resources, calls, batchSize, queueDepth, interfaceRate };
}

/** What a replica says of its environment: the last success and commit, leadership, whether synced, and who leads. */
export function statusInstruments(registers: Registry[], env: string[]) {
  const lastSuccess = new Gauge({ name: "gatesync_last_success_timestamp_seconds", help: "Time of the last successful run", labelNames: env, registers });
  const commitsBehind = new Gauge({
    name: "gatesync_commits_behind",
    help: "Commits of the fetched branch head not applied yet (0 once applied; 1 when the count is unknown)",
    labelNames: env,
    registers,
  });
  const started = Date.now() / 1000;
  const lastSuccessAge = new Gauge({
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
  const commit = new Gauge({ name: "gatesync_commit_info", help: "The commit in force (value 1)", labelNames: ["commit", ...env], registers });
  const leader = new Gauge({
    name: "gatesync_leader",
    help: "1 when this replica may apply (with environments: leads the environment)",
    labelNames: env,
    registers,
  });
  const synced = new Gauge({
    name: "gatesync_synced",
    help: "1 when the last run applied the newest revision in full (or had nothing to do)",
    labelNames: env,
    registers,
  });
  const leaderless = new Gauge({
    name: "gatesync_environment_leaderless",
    help: "A fleet's lease table as this replica last read it: 1 when no replica leads the environment (none while it cannot be read)",
    labelNames: ["environment"],
    registers,
  });
  return { lastSuccess, commitsBehind, lastSuccessAge, commit, leader, synced, leaderless };
}

/**
 * Promotion and verification (docs/user/promotion.md): promotions and rollbacks asked for and how
 * they ended, verification rows written (a grant or a withdrawal), and where the revision an
 * environment runs stands now — soaking (with the seconds left), verified, or failing.
 */
export function promotionInstruments(registers: Registry[], env: string[]) {
  const promotions = new Counter({
    name: "gatesync_promotions_total",
    help: "Promotions and rollbacks by kind (promotion, rollback), who asked (actor: token, auto) and result: recorded, dry-run, in-force (nothing to do), refused (a gate, a hold, a bad revision)",
    labelNames: ["kind", "actor", "result", ...env],
    registers,
  });
  const verifications = new Counter({
    name: "gatesync_verifications_total",
    help: "Verification rows written by result: verified (a revision soaked healthy), withdrawn (a later run of a verified revision failed)",
    labelNames: ["result", ...env],
    registers,
  });
  const verificationState = new Gauge({
    name: "gatesync_verification_state",
    help: "1 for the state of the environment's newest revision: soaking, verified, failing (its newest run failed), none (no telling run); on the replica leading an environment promotion reads",
    labelNames: ["state", ...env],
    registers,
  });
  const soakEnds = new Map<string, { labels: Record<string, string>; at: number }>();
  const soakRemaining = new Gauge({
    name: "gatesync_soak_remaining_seconds",
    help: "Seconds until the soak of the environment's newest revision ends (0 once it is verified or when none runs)",
    labelNames: env,
    registers,
    collect() {
      for (const { labels, at } of soakEnds.values()) this.set(labels, Math.max(0, (at - Date.now()) / 1000));
    },
  });
  return { promotions, verifications, verificationState, soakRemaining, soakEnds };
}
