/**
 * What the daemon's log says about a run, as pino fields: the located errors of a refused
 * commit and the blocked changes of an apply. An operator reading only the log (kubectl logs,
 * a log search) must learn why a commit was refused and what is left for a person to do,
 * without opening /status. Lists are bounded: a commit with 5,000 errors is one log line of
 * the first few and a count of the rest.
 */
import type { RunResult } from "../../run/run-report.js";
import type { ApplySummary } from "../../apply/types.js";
import type { Diagnostic } from "../../errors.js";
import type { Plan } from "../../plan/plan.js";

/** Items listed in one log line; the rest are counted. */
export const loggedItemsMax = 10;

interface LoggedError {
  readonly code: string;
  readonly file?: string;
  readonly line?: number;
  readonly column?: number;
  readonly resource?: string;
  readonly path?: string;
  readonly message: string;
}

/** A bounded list: its first items, and `…NotLogged` when some were left out. */
function bounded<T>(items: readonly T[], name: string): Record<string, unknown> {
  const rest = items.length - loggedItemsMax;
  return { [name]: items.slice(0, loggedItemsMax), ...(rest > 0 ? { [`${name}NotLogged`]: rest } : {}) };
}

/** `errors` (their number), `diagnostics` (the first errors, located) and `diagnosticsNotLogged`. */
export function refusedCommitFields(diagnostics: readonly Diagnostic[]): Record<string, unknown> {
  const errors = diagnostics.filter((d) => d.severity === "error");
  const located = errors.map((d): LoggedError => ({
    code: d.code,
    ...(d.file === undefined ? {} : { file: d.file }),
    ...(d.line === undefined ? {} : { line: d.line }),
    ...(d.column === undefined ? {} : { column: d.column }),
    ...(d.resource === undefined ? {} : { resource: d.resource }),
    ...(d.path === undefined || d.path === "" ? {} : { path: d.path }),
    message: d.message,
  }));
  return { errors: errors.length, ...bounded(located, "diagnostics") };
}

/**
 * `blocked` (the first blocked changes: resource, file from the repository's root, why and what
 * to do) and `blockedNotLogged`; the plan names files from the repository's root already (run/plan-shown.ts `asShown`).
 */
export function blockedFields(plan: Plan): Record<string, unknown> {
  const blocked = plan.changes
    .filter((c) => c.action === "blocked")
    .map((c) => ({
      resource: c.id,
      ...(c.source === undefined ? {} : { file: c.source.file, line: c.source.line }),
      ...(c.reason === undefined ? {} : { reason: c.reason }),
      ...(c.hint === undefined ? {} : { hint: c.hint }),
    }));
  return bounded(blocked, "blocked");
}

/** The counts of `run finished`. */
export function runFinishedFields(summary: ApplySummary): Record<string, unknown> {
  return {
    applied: summary.applied.length,
    failed: summary.failed.length,
    inDoubt: summary.inDoubt.length,
    blocked: summary.blocked.length,
    unchanged: summary.unchanged,
    calls: summary.calls,
  };
}

/**
 * The `result` label of gatesync_runs_total and gatesync_run_duration_seconds: a run that
 * succeeded without changing anything on a server counts as `unchanged`, not `applied`, so
 * that `increase(gatesync_runs_total{result="applied"}[1h])` counts runs that changed something.
 */
export function metricResult(result: RunResult, summary: ApplySummary | undefined): string {
  if (result !== "applied" || summary === undefined) return result;
  const changed = summary.applied.length + summary.quotaResets;
  return changed === 0 ? "unchanged" : "applied";
}
