/**
 * The run, stage by stage, read top to bottom: every `gatesync plan`, `gatesync apply`, daemon
 * run, promotion plan and state view goes through this one function (runPlan and runApply call
 * it). A plan stops after computing it; an apply holds the state's lock throughout and goes on
 * to review, record, execute, relabel. docs/dev/architecture.md ("The run") lists the stages as
 * they are called here, and test/architecture/run-stages.test.ts keeps the two in step.
 */
import { movedSince } from "../record/state.js";
import { labellingState, labelsById } from "../select/record-labels.js";
import { execute, recordMovesAndAdoptions, relabel, reviewAndConfirm, takeLock, versionAfter } from "./apply-stages.js";
import { computeThePlan, credentialsAndSecrets, planInputs, prepare, readHeads, readPayloads, validate } from "./plan-stages.js";
import type { Prepared, Validated } from "./plan-stages.js";
import { claimOwnership, readOwnership } from "./ownership-stages.js";
import type { ApplyPart, ApplyRunResult, PlanRun, PlanRunInput } from "./run-types.js";

export async function runStages(input: PlanRunInput): Promise<PlanRun>;
export async function runStages(input: PlanRunInput, apply: ApplyPart): Promise<ApplyRunResult>;
export async function runStages(input: PlanRunInput, apply?: ApplyPart): Promise<PlanRun | ApplyRunResult> {
  const lock = await takeLock(input.state, apply);
  try {
    const ctx = await credentialsAndSecrets(input);
    let validated: Validated | undefined = await validate(input, ctx);
    const heads = await readHeads(input);
    let prepared: Prepared | undefined = prepare(input, ctx, validated.resources, heads);
    const state = await readPayloads(input, heads, prepared.desired);
    // written since its heads were read: the state came back whole, and is prepared for again
    if (movedSince(heads, state)) prepared = prepare(input, ctx, validated.resources, state);
    const kept = planInputs(input, validated, prepared);
    const owners = await readOwnership(input, kept.desired.desired, state);
    // a plan only: nothing holds the resources from here on (the bodies to send would)
    validated = undefined;
    prepared = undefined;
    const planned = await computeThePlan(input, ctx, kept, state, apply?.savedPlan, owners);
    if (apply === undefined || lock === undefined) return planned;
    if (!(await reviewAndConfirm(planned, apply))) return { plan: planned.plan, run: planned, declined: true };
    // under the lock: what another owner claimed since is refused, what nobody owns is claimed
    const run = await claimOwnership(input, planned, labellingState(input.state, labelsById(planned.resources), planned.state));
    const recorded = await recordMovesAndAdoptions(input, run);
    const summary = await execute({ ...input, ...apply }, run, recorded, lock);
    await relabel(input.state, run, recorded.labels);
    return { plan: run.plan, run, summary, stateAfter: await versionAfter(input.state, run.plan) };
  } finally {
    await lock?.release();
  }
}
