/**
 * `gatesync apply`: the run's stages (run-stages.ts) — the state's lock taken, a plan against the
 * state as it is now (or a saved plan checked against it), confirmation when asked for, the
 * execution, the relabelling and the state's version after it.
 */
import { runStages } from "./run-stages.js";
import type { ApplyRunInput, ApplyRunResult } from "./run-types.js";

export type { ApplyPart, ApplyRunInput, ApplyRunResult } from "./run-types.js";

/** The run's stages, every one of them (run-stages.ts): the plan under the state's lock, then the apply. */
export async function runApply(input: ApplyRunInput): Promise<ApplyRunResult> {
  return runStages(input, input);
}
