/** What a reconcile loop (reconciler.ts) is given: its config, source, state, and the parts of the daemon it reports to. */
import type { Dispatcher } from "undici";
import type { Progress } from "../../apply/types.js";
import type { TargetPacers } from "../../apply/pace/target-pacers.js";
import type { RunReport } from "../../run/run-report.js";
import type { GatesyncConfig } from "../../config/config.js";
import type { Logger } from "../../logger.js";
import type { Plan } from "../../plan/plan.js";
import type { StateBackend } from "../../record/state.js";
import type { OwnershipRegistry } from "../../record/ownership/ownership.js";
import type { Source } from "../../source/source.js";
import type { RepositoryValidator } from "../../validate/repository/repository-validator.js";
import type { RunMetrics } from "../metrics/metrics.js";
import type { TeamSettingsReader } from "../environments/repository-settings.js";

export interface ReconcilerOptions {
  readonly config: GatesyncConfig;
  /** Hash of the config file: a changed config is a reason to run. */
  readonly configHash: string;
  readonly source: Source;
  /**
   * `promotion: auto` (promotion/auto-promotion.ts): a step of each run before its fetch, which
   * writes the source environment's newest candidate as the promotion the fetch then reads.
   */
  readonly autoPromote?: () => Promise<void>;
  readonly state: StateBackend;
  /** The ownership registry its runs read and claim in (docs/user/teams.md); absent: no ownership check. */
  readonly ownership?: OwnershipRegistry;
  readonly validator: RepositoryValidator;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger;
  readonly dispatcher: Dispatcher;
  readonly metrics: RunMetrics;
  /** Whether this replica may apply (leader election); default always. */
  readonly canApply?: () => boolean;
  /** First retry delay after a failing run (doubles while it keeps failing, capped at the interval). */
  readonly retryBaseMs?: number;
  /** How long stopping waits for calls in flight. */
  readonly shutdownTimeoutMs?: number;
  readonly random?: () => number;
  /** Told of every run, with its plan (the demo prints them). */
  readonly onRun?: (report: RunReport, plan: Plan | undefined) => void;
  /** Told when a run starts applying, and of its progress (the status page). */
  readonly observer?: RunObserver;
  /** Runs each run (fetch to record) through it: the daemon's bound on environments running at once (limits.concurrentEnvironments). */
  readonly runSlot?: <T>(work: () => Promise<T>) => Promise<T>;
  /** Each target's pace, shared by the daemon's environments (an environment sending to another's gateway shares its rate). */
  readonly pacers?: TargetPacers;
  /** Told when a run starts applying a revision (commit status: pending). */
  readonly onRunStart?: (where: { readonly revision: string; readonly commit?: string }) => void;
  /** Reads each run's team settings from the repository (the daemon's; absent: the config's own, as one-shot tests give it). */
  readonly teamSettings?: TeamSettingsReader;
  /** Whether the environment is held (a freeze, a closed sync window: hold.ts) for this revision: the hold's message, or undefined to apply. */
  readonly held?: (revision: string) => Promise<string | undefined>;
}

export interface RunObserver {
  runStarted(reason: string): void;
  progress(): Progress;
}
