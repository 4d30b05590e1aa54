/**
 * A run of an environment held by a freeze or a closed sync window (hold.ts): the revision is
 * planned against the state — what waits is there to see on the page, in /status and the run's
 * row — and nothing is sent. The run ends `frozen`, with the hold's message as its reason.
 */
import type { RunReport } from "../../run/run-report.js";
import type { GatesyncConfig } from "../../config/config.js";
import type { Logger } from "../../logger.js";
import { runPlan } from "../../run/run-plan.js";
import type { StateBackend } from "../../record/state.js";
import type { SourceSnapshot } from "../../source/source.js";
import type { RepositoryValidator } from "../../validate/repository/repository-validator.js";

export interface HeldRunParts {
  readonly validator: RepositoryValidator;
  readonly state: StateBackend;
  readonly env: Readonly<Record<string, string | undefined>>;
  /** The environment's hold for a revision (reconciler-options.ts). */
  readonly held?: (revision: string) => Promise<string | undefined>;
}

/** Undefined when the environment may apply the snapshot; else the plan of the held run, as its report's extra fields (finished `frozen`). */
export async function heldReport(
  parts: HeldRunParts,
  run: { readonly config: GatesyncConfig; readonly snapshot: SourceSnapshot; readonly log: Logger },
): Promise<Partial<RunReport> | undefined> {
  const { snapshot } = run;
  const message = await parts.held?.(snapshot.revision);
  if (message === undefined) return undefined;
  const planned = await runPlan({
    config: run.config,
    root: snapshot.root,
    ...(snapshot.boundary === undefined ? {} : { boundary: snapshot.boundary }),
    validator: parts.validator,
    state: parts.state,
    env: parts.env,
    ...(snapshot.commit === undefined ? {} : { commit: snapshot.commit }),
    traced: false,
    payloads: "needed",
    keep: "plan",
  });
  const waiting = planned.plan.changes.filter((c) => c.action !== "no-op").length;
  run.log.info({ hold: message, waiting }, "environment held: planned, nothing applied");
  return { revision: snapshot.revision, ...(snapshot.commit === undefined ? {} : { commit: snapshot.commit }), plan: planned.plan.summary, error: message };
}
