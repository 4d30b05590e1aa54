/**
 * The stages of a run after its plan (run-stages.ts calls them in order): the state's lock, the
 * review, the records that need no call (moves, adoptions), the execution, the relabelling and
 * the state's version left. The executor is handed everything it sends: the bodies included.
 */
import { ErrorCode, StateError } from "../errors.js";
import type { Plan } from "../plan/plan.js";
import { hasChanges } from "../plan/plan.js";
import { recordAdoptions } from "../apply/records/record-adoptions.js";
import { recordMoves } from "../apply/records/record-moves.js";
import { labellingState, labelsById, staleLabelRecords } from "../select/record-labels.js";
import { movedSince } from "../record/state.js";
import type { StateBackend, StateLock, StateSnapshot, StateVersion } from "../record/state.js";
import type { ApplySummary } from "../apply/types.js";
import { executePlan } from "../apply/executor.js";
import type { ApplyPart, ApplyRunInput, PlanRun, PlanRunInput } from "./run-types.js";

/** The state's lock, for an apply (held to its end); a plan takes none. */
export async function takeLock(state: StateBackend, apply: ApplyPart | undefined): Promise<StateLock | undefined> {
  return apply === undefined ? undefined : state.lock(apply.lockOwner ?? "gatesync apply");
}

/** Refuses a saved plan made against another state, or from other files. */
function checkSavedPlan(saved: Plan, current: Plan): void {
  if (movedSince(saved.state, current.state)) {
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

/** The plan checked against a saved one, told to the caller's review, and confirmed: false when the confirmation was declined. */
export async function reviewAndConfirm(run: PlanRun, apply: ApplyPart): Promise<boolean> {
  if (apply.savedPlan !== undefined) checkSavedPlan(apply.savedPlan, run.plan);
  await apply.review?.(run);
  return apply.confirm === undefined || !hasChanges(run.plan) || (await apply.confirm(run.plan));
}

/** What the execution writes through and builds on once the moves and adoptions are recorded (no call). */
export interface Recorded {
  readonly labels: ReturnType<typeof labelsById>;
  /** The state written through: each record learns its resource's labels. */
  readonly state: StateBackend;
  /** The snapshot the execution builds its records on. */
  readonly before: StateSnapshot;
}

/** Renames and adoptions recorded before any call, the state written through labelling each record. */
export async function recordMovesAndAdoptions(input: PlanRunInput, run: PlanRun): Promise<Recorded> {
  const labels = labelsById(run.resources);
  const state = labellingState(input.state, labels, run.state);
  const now = (input.now ?? (() => new Date()))().toISOString();
  const moved = await recordMoves(run.plan, run.state, state, now);
  const before = await recordAdoptions(run.plan, run.desired, moved, state, { now, hashKeyStore: run.hashKey.store });
  return { labels, state, before };
}

/** The plan executed (apply/executor.ts): its changes sent, their bodies read from the run's desired set, the fence checked before every call. */
export async function execute(input: ApplyRunInput, run: PlanRun, recorded: Recorded, lock: StateLock): Promise<ApplySummary> {
  return executePlan(
    {
      plan: run.plan,
      desired: run.desired,
      resources: run.resources,
      hashKey: run.hashKey,
      state: recorded.before,
      ...(run.plan.commit === undefined ? {} : { commit: run.plan.commit }),
      ...(input.recheck === true ? { recheck: true } : {}),
    },
    {
      config: input.config,
      env: input.env,
      state: recorded.state,
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
}

/** Unchanged resources whose labels changed: their records learn the new labels (no call). */
export async function relabel(state: StateBackend, run: PlanRun, labels: Recorded["labels"]): Promise<void> {
  const unchanged = run.plan.changes.filter((c) => c.action === "no-op").map((c) => c.id);
  for (const record of staleLabelRecords(unchanged, labels, run.state.resources)) await state.write(record);
}

/** The state's version after the apply; one that cannot be read is no version any later read matches (serial -1). */
export async function versionAfter(state: StateBackend, plan: Plan): Promise<StateVersion> {
  return state.readVersion().catch(() => ({ lineage: plan.state.lineage, serial: -1 }));
}
