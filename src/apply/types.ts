/** The apply's inputs, dependencies and results: shared by the executor, its parts and its callers. */
import type { Dispatcher } from "undici";
import type { GatesyncConfig } from "../config/config.js";
import type { GatesyncError } from "../errors.js";
import type { HealthResult } from "../kinds/kind.js";
import type { InterfaceName } from "../contract/interfaces.js";
import type { Resource } from "../kinds/resource.js";
import type { Logger } from "../logger.js";
import type { DesiredSet } from "../plan/desired.js";
import type { CallCounts, Plan } from "../plan/plan.js";
import type { StateBackend, StateSnapshot } from "../record/state.js";
import type { TargetPacers } from "./pace/target-pacers.js";

export type Env = Readonly<Record<string, string | undefined>>;

export interface Progress {
  start(total: number): void;
  done(id: string, outcome: ResourceOutcome["status"]): void;
  stop(): void;
}

export const noProgress: Progress = { start: () => undefined, done: () => undefined, stop: () => undefined };

export interface ResourceOutcome {
  readonly id: string;
  readonly status: "applied" | "failed" | "in-doubt";
  readonly message?: string;
  /** HTTP status of the last answer, when there was one. */
  readonly httpStatus?: number;
  readonly viaBatch: boolean;
  readonly attempts: number;
}

/**
 * The calls an apply made, counted as a plan counts them (`CallCounts`): each interface's member
 * is its direct calls, `batchCalls` the batch calls carrying changes, `total` every request
 * sent — plus what only an apply knows.
 */
export interface AppliedCalls extends CallCounts {
  /** Batch calls of the post-apply checks (requests to the batch route's interface beyond its direct calls and `batchCalls`). */
  readonly checks: number;
  readonly retries: number;
  readonly pauses: number;
}

export interface ApplySummary {
  readonly applied: readonly string[];
  readonly failed: ReadonlyArray<{ readonly id: string; readonly message: string }>;
  readonly inDoubt: ReadonlyArray<{ readonly id: string; readonly message: string }>;
  readonly blocked: readonly string[];
  readonly unchanged: number;
  readonly orphans: readonly string[];
  /** Records moved to a new name (renames), as `Old → New`; no call. */
  readonly moved: readonly string[];
  /** Resources adopted: recorded under an existing object's server id. */
  readonly adopted: readonly string[];
  readonly quotaResets: number;
  readonly health: readonly HealthResult[];
  readonly calls: AppliedCalls;
  readonly batchFallback?: string;
  /** Set when a change of this run may change the batch route's loopback API: from which wave calls went directly, and why. */
  readonly batchGuard?: string;
  /** Set when batches went to the route without its trailing slash (production's has it). */
  readonly batchRoute?: string;
  /** Changes not started because the apply was stopped (shutdown, lost leadership, a state that cannot be written). */
  readonly skipped: readonly string[];
  readonly durationMs: number;
  /** The state could not be written (disk full, I/O error …): the apply stopped starting calls. */
  readonly stateFailure?: GatesyncError;
}

export interface CallEvent {
  readonly interface: InterfaceName;
  /** The operation, or `batch` for a batch call. */
  readonly operation: string;
  /** HTTP status, or `error` when there was no answer. */
  readonly code: string;
  /** Sub-requests carried, for batch calls. */
  readonly batchSize?: number;
  readonly queueDepth: number;
  /** The interface's current rate (requests per second) after this call: lowered by throttling. */
  readonly rate: number;
}

export interface ApplyDeps {
  readonly config: GatesyncConfig;
  readonly env: Env;
  /** Locked by the caller for the whole apply. */
  readonly state: StateBackend;
  readonly logger: Logger;
  readonly dispatcher: Dispatcher;
  readonly now?: () => Date;
  readonly random?: () => number;
  readonly progress?: Progress;
  /** Once aborted, no new call starts and no pause is waited out; calls in flight finish and are recorded. */
  readonly signal?: AbortSignal;
  /** Told of every HTTP call: for metrics. */
  readonly observe?: (call: CallEvent) => void;
  /** Throws unless this process still holds the state lock: checked before every call (StateLock.check). */
  readonly fence?: () => void;
  /** Each target's pace, shared with the process's other applies (a daemon's environments); default one per apply. */
  readonly pacers?: TargetPacers;
}

export interface ApplyInput {
  readonly plan: Plan;
  /** What is sent: each change's request, and (`outgoing`) its body, read as it is sent; the executor makes none itself. */
  readonly desired: DesiredSet;
  readonly resources: readonly Resource[];
  /** The key of the keyed hashes, and the key the state must store on its first write (if any). */
  readonly hashKey: { readonly key: string; readonly store: string | undefined };
  /** The state the plan was made against, read under the same lock. */
  readonly state: StateSnapshot;
  readonly commit?: string;
  /** Run the post-apply checks of every resource that has them, applied in this run or not (a soak's end: docs/user/promotion.md). */
  readonly recheck?: boolean;
}
