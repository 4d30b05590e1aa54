/** What a run takes and gives back: a plan's input and result (runPlan), an apply's beyond them (runApply). */
import type { Diagnostic } from "../errors.js";
import type { GatesyncConfig } from "../config/config.js";
import type { Resource } from "../kinds/resource.js";
import type { StateBackend, StateSnapshot } from "../record/state.js";
import type { SelectionRequest } from "../select/selection.js";
import type { RepositoryValidator } from "../validate/repository/repository-validator.js";
import type { DesiredMemo, DesiredSet } from "../plan/desired.js";
import type { Plan } from "../plan/plan.js";
import type { Invocation } from "../printed-commands.js";
import type { Dispatcher } from "undici";
import type { Logger } from "../logger.js";
import type { StateVersion } from "../record/state.js";
import type { OwnershipRegistry, OwnershipRow } from "../record/ownership/ownership.js";
import type { OwnershipView } from "../plan/ownership-check.js";
import type { ApplyDeps, ApplySummary, Progress } from "../apply/types.js";

export interface PlanRun {
  readonly plan: Plan;
  readonly state: StateSnapshot;
  readonly resources: readonly Resource[];
  readonly desired: DesiredSet;
  /** The hash key, and whether the state must store it on first write. */
  readonly hashKey: { readonly key: string; readonly store: string | undefined };
  readonly warnings: number;
  /** The governance rules' findings (none of them errors: an error stops the plan). */
  readonly ruleFindings: readonly Diagnostic[];
  /** The ownership registry's rows this run's apply claimed (ownership-stages.ts): the daemon's skip counts them as read. */
  readonly claimed?: readonly OwnershipRow[];
  /** The registry's rows the plan was checked against, and their keys (readOwnership): the daemon's skip reads those keys again. */
  readonly ownershipRead?: OwnershipView;
}

export interface PlanRunInput {
  readonly config: GatesyncConfig;
  /** false: a plan that is no run's (the status page's preview): no spans (telemetry/spans.ts: one run is traced at a time). */
  readonly traced?: false;
  /** Resource directory (the config's, or a checkout of the git source). */
  readonly root: string;
  /** The repository root, when the resources are a part of it. */
  readonly boundary?: string;
  readonly validator: RepositoryValidator;
  readonly state: StateBackend;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The commit planned: known, or git's answer awaited when the plan is computed (asked while the files are checked). */
  readonly commit?: string | Promise<string | undefined>;
  readonly now?: () => Date;
  readonly reassert?: boolean;
  /** Kept across runs by a daemon: unchanged resources are not prepared again. */
  readonly desiredMemo?: DesiredMemo;
  /**
   * "needed": read from the state only the payloads the plan reads (StateBackend.readHeads, then
   * readPayloads): records of unchanged resources come without theirs. The returned state is
   * then for planning only, not for an apply (which builds new records from the earlier ones).
   */
  readonly payloads?: "needed";
  /** Plan part of the repository (`--target`, `--exclude`, `--kind`, `--selector`); the config's `selector` always applies. */
  readonly selection?: SelectionRequest;
  /**
   * "plan": only the plan is used (`gatesync plan`): the resources are let go once the desired
   * set is prepared — the returned run has none and no bodies to send — so that a plan of
   * 100,000 resources does not hold them while it is computed and written.
   */
  readonly keep?: "plan";
  /** The plan will be printed as JSON, documents and all (ValidateOptions.printsDocuments). */
  readonly printsDocuments?: boolean;
  /** `--allow-mass-deactivation`: lifts the guard against mass deactivation for this run. */
  readonly allowMassDeactivation?: boolean;
  /**
   * The ownership registry (docs/user/teams.md): its rows of the config's targets are read for
   * the plan, and an apply claims under its lock what it declares; absent: no ownership check.
   */
  readonly ownership?: OwnershipRegistry;
  /** What the commands the plan's hints quote need (printed-commands.ts); default: the config's `--env` and `-c`. */
  readonly invocation?: Invocation;
}

/** What applying needs beyond a plan (the stages after the plan read it). */
export interface ApplyPart {
  readonly logger: Logger;
  readonly dispatcher: Dispatcher;
  /** A plan saved earlier: applied only if nothing changed since. */
  readonly savedPlan?: Plan;
  /** Told of the plan before anything is sent (with or without changes): it throws to refuse the apply (the CLI's checks of its state). */
  readonly review?: (run: PlanRun) => Promise<void>;
  /** Asked before executing a plan with changes; false stops the apply. */
  readonly confirm?: (plan: Plan) => Promise<boolean>;
  readonly progress?: Progress;
  readonly random?: () => number;
  readonly signal?: AbortSignal;
  readonly observe?: ApplyDeps["observe"];
  /** Who holds the state lock, as another process is told (the backend adds pid and host): default `gatesync apply`. */
  readonly lockOwner?: string;
  readonly pacers?: ApplyDeps["pacers"];
  /** Run every resource's post-apply checks, applied in this run or not (the daemon's run at a soak's end). */
  readonly recheck?: boolean;
}

/** What a plan needs, and what applying it needs beyond that. */
export interface ApplyRunInput extends PlanRunInput, ApplyPart {}

export type ApplyRunResult =
  | {
      readonly plan: Plan;
      readonly run: PlanRun;
      readonly summary: ApplySummary;
      /** The state's version once the apply's last write is done, read under its lock: what it left. */
      readonly stateAfter: StateVersion;
    }
  | { readonly plan: Plan; readonly run: PlanRun; readonly declined: true };
