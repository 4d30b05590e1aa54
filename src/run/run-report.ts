/**
 * What one run of the pipeline (fetch, validate, plan, apply) reports: the daemon keeps it for
 * its status page and metrics, and notifications are derived from it.
 */
import type { Diagnostic } from "../errors.js";
import type { PlanSummary } from "../plan/plan.js";
import type { ApplySummary } from "../apply/types.js";

/**
 * How a run ended. `waiting`: an environment promoted from another has nothing promoted to it
 * yet (daemon/promoted-source.ts) — not a failure: it applies nothing until a promotion.
 * `frozen`: the environment is frozen or outside its sync window (daemon/hold.ts): planned, nothing applied.
 */
export type RunResult = "applied" | "partial" | "noop" | "invalid" | "source-error" | "error" | "standby" | "waiting" | "frozen";

export interface RunReport {
  readonly reason: string;
  readonly startedAt: string;
  readonly finishedAt: string;
  readonly durationMs: number;
  readonly result: RunResult;
  readonly revision?: string;
  readonly commit?: string;
  /** The commit's author and subject line (a git source's, bounded: repository text). */
  readonly author?: string;
  readonly subject?: string;
  /** The newest revision stood applied in full when the run ended (gatesync_synced); absent on a standby's turn. */
  readonly synced?: boolean;
  readonly error?: string;
  readonly diagnostics?: readonly Diagnostic[];
  /** The governance rules' warnings, info and hints of an applied revision (docs/user/rules.md). */
  readonly ruleFindings?: readonly Diagnostic[];
  /** What the repository's gatesync.yaml writes that the daemon ignores: operator settings, environments it does not run (settings-owners.ts). */
  readonly ignoredSettings?: readonly Diagnostic[];
  readonly plan?: PlanSummary;
  readonly summary?: ApplySummary;
}
