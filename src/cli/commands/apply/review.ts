/**
 * What `gatesync apply` does with its plan before it sends anything: refuses a state it did not
 * expect — empty while the plan would create (STATE_EMPTY, the check `plan` makes in CI), or of
 * another lineage than this working copy last applied the environment with (STATE_FOREIGN) —
 * and, when no one is asked (--auto-approve, a saved plan), prints the plan and its warnings
 * as `plan` prints them: an apply never acts unseen.
 */
import type { EnvironmentConfig } from "../../../config/environments.js";
import { formatDiagnostic } from "../../../errors.js";
import type { PlanRun } from "../../../run/run-plan.js";
import { planChunks } from "../../../plan/render/render.js";
import type { StateVersion } from "../../../record/state.js";
import { painter } from "../../../text/style.js";
import { checkAppliedLineage, rememberAppliedLineage } from "../../common/applied-lineage.js";
import type { CliIo } from "../../common/cli-io.js";
import { writeChunks } from "../../common/cli-io.js";
import { checkStateRequired } from "../plan/plan-state.js";

export interface StateTrustFlags {
  readonly allowEmptyState?: boolean;
  readonly allowForeignState?: boolean;
}

/** Where an apply runs: the config's directory (where `.gatesync/` is), the environment, and its state as messages name it. */
export interface ApplyPlace {
  readonly configDir: string;
  readonly environment: EnvironmentConfig;
  readonly stateDescription: string;
}

/** The review runApply calls with its plan (ApplyPart `review`, run/run-types.ts; called by the stage `reviewAndConfirm`). */
export function applyReview(place: ApplyPlace, flags: StateTrustFlags, io: CliIo, show: { readonly plan: boolean; readonly color: boolean }) {
  return async (run: PlanRun): Promise<void> => {
    const { plan } = run;
    if (plan.summary.create > 0)
      checkStateRequired(plan.state.serial, place.stateDescription, io.env, { allowEmptyState: flags.allowEmptyState === true }, "apply");
    await checkAppliedLineage(
      place.configDir,
      place.environment.name,
      { lineage: plan.state.lineage, description: place.stateDescription },
      flags.allowForeignState === true,
    );
    // the governance rules' warnings (an error would have stopped the apply before any call)
    for (const d of run.ruleFindings) io.stderr(`${formatDiagnostic(d, painter(show.color))}\n`);
    if (show.plan)
      await writeChunks(
        io,
        planChunks({ ...plan, state: { ...plan.state, source: place.stateDescription, ...(plan.state.serial === 0 ? { empty: true } : {}) } }, "text", {
          color: show.color,
        }),
      );
  };
}

/** After an apply that wrote its state: this working copy remembers the state's lineage for the environment (a failure only said). */
export async function rememberApplied(place: ApplyPlace, after: StateVersion, io: CliIo): Promise<void> {
  await rememberAppliedLineage(place.configDir, place.environment.name, {
    lineage: after.lineage,
    state: place.stateDescription,
    at: new Date().toISOString(),
  }).catch((err: unknown) => io.stderr(`note: cannot remember which state this apply used (${(err as Error).message}): the next apply does not check it\n`));
}
