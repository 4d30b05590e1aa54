/**
 * `gatesync apply`: takes the state lock, plans against the state as it is now (or checks a
 * saved plan against it), asks for confirmation when asked to, and executes.
 */
import type { Dispatcher } from "undici";
import { ErrorCode, StateError } from "../errors.js";
import type { Logger } from "../logger.js";
import type { Plan } from "../plan/plan.js";
import { hasChanges } from "../plan/plan.js";
import { runPlan } from "./run-plan.js";
import type { PlanRun, PlanRunInput } from "./run-plan.js";
import { recordAdoptions } from "../apply/records/record-adoptions.js";
import { recordMoves } from "../apply/records/record-moves.js";
import { labellingState, labelsById, staleLabelRecords } from "../select/record-labels.js";
import type { StateBackend, StateVersion } from "../record/state.js";
import type { ApplyDeps, ApplySummary, Progress } from "../apply/types.js";
import { executePlan } from "../apply/executor.js";

/** What a plan needs, and what applying it needs beyond that. */
export interface ApplyRunInput extends PlanRunInput {
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

export type ApplyRunResult =
  | {
      readonly plan: Plan;
      readonly run: PlanRun;
      readonly summary: ApplySummary;
      /** The state's version once the apply's last write is done, read under its lock: what it left. */
      readonly stateAfter: StateVersion;
    }
  | { readonly plan: Plan; readonly run: PlanRun; readonly declined: true };

/** Refuses a saved plan made against another state, or from other files. */
export function checkSavedPlan(saved: Plan, current: Plan): void {
  if (saved.state.lineage !== current.state.lineage || saved.state.serial !== current.state.serial) {
    throw new StateError(
      ErrorCode.STATE_CHANGED,
      `the saved plan was made against state serial ${saved.state.serial}; the state is now at serial ${current.state.serial}`,
      {
        hint: "something was applied since: make a new plan and review it",
      },
    );
  }
  if (saved.digest.read() !== current.digest.read()) {
    throw new StateError(ErrorCode.STATE_CHANGED, "the repository no longer matches the saved plan (its changes differ)", {
      hint: "make a new plan from the current files and review it",
    });
  }
}

/** The state's version after the apply; one that cannot be read is no version any later read matches (serial -1). */
async function versionAfter(state: StateBackend, plan: Plan): Promise<StateVersion> {
  return state.readVersion().catch(() => ({ lineage: plan.state.lineage, serial: -1 }));
}

export async function runApply(input: ApplyRunInput): Promise<ApplyRunResult> {
  const lock = await input.state.lock(input.lockOwner ?? "gatesync apply");
  try {
    // plans against the state as it is now, under the lock; a saved plan's deactivations were
    // reviewed (made with --allow-mass-deactivation, or under the guard's share): the digest holds them to it
    const reviewed = input.savedPlan !== undefined && input.savedPlan.summary.deactivate > 0 && input.savedPlan.massDeactivation === undefined;
    const run = await runPlan(reviewed ? { ...input, allowMassDeactivation: true } : input);
    if (input.savedPlan !== undefined) checkSavedPlan(input.savedPlan, run.plan);
    await input.review?.(run);
    if (input.confirm !== undefined && hasChanges(run.plan) && !(await input.confirm(run.plan))) return { plan: run.plan, run, declined: true };
    const labels = labelsById(run.resources);
    const state = labellingState(input.state, labels, run.state);
    const now = (input.now ?? (() => new Date()))().toISOString();
    const moved = await recordMoves(run.plan, run.state, state, now);
    const before = await recordAdoptions(run.plan, run.desired, moved, state, { now, hashKeyStore: run.hashKey.store });
    const summary = await executePlan(
      {
        plan: run.plan,
        desired: run.desired,
        resources: run.resources,
        hashKey: run.hashKey,
        state: before,
        ...(run.plan.commit === undefined ? {} : { commit: run.plan.commit }),
        ...(input.recheck === true ? { recheck: true } : {}),
      },
      {
        config: input.config,
        env: input.env,
        state,
        logger: input.logger,
        dispatcher: input.dispatcher,
        ...(input.now === undefined ? {} : { now: input.now }),
        ...(input.random === undefined ? {} : { random: input.random }),
        ...(input.progress === undefined ? {} : { progress: input.progress }),
        ...(input.signal === undefined ? {} : { signal: input.signal }),
        ...(input.observe === undefined ? {} : { observe: input.observe }),
        ...(input.pacers === undefined ? {} : { pacers: input.pacers }),
        fence: () => lock.check(),
      },
    );
    // unchanged resources whose labels changed: their records learn the new labels (no call)
    const unchanged = run.plan.changes.filter((c) => c.action === "no-op").map((c) => c.id);
    for (const record of staleLabelRecords(unchanged, labels, run.state.resources)) await input.state.write(record);
    return { plan: run.plan, run, summary, stateAfter: await versionAfter(input.state, run.plan) };
  } finally {
    await lock.release();
  }
}
