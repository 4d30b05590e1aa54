/**
 * One plan from a config: the run's stages (run-stages.ts) up to the plan — credentials and
 * secrets, validation, the state's heads, the desired set, the payloads the plan reads, the plan.
 * No lock is taken. IO lives in the stages (stages.ts); the planning itself is `computePlan`.
 */
import { runStages } from "./run-stages.js";
import type { PlanRun, PlanRunInput } from "./run-types.js";

export type { PlanRun, PlanRunInput } from "./run-types.js";

/** The run's stages up to the plan (run-stages.ts). */
export async function runPlan(input: PlanRunInput): Promise<PlanRun> {
  return runStages(input);
}
