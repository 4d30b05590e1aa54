/**
 * One plan of one (effective) config, as `gatesync plan` computes it for a single environment and
 * for each of many (plan-action.ts, plan-environments.ts): the plan, its saved JSON, its exit code.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import type { GatesyncConfig } from "../../../config/config.js";
import { UsageError, formatDiagnostic } from "../../../errors.js";
import type { Diagnostic } from "../../../errors.js";
import { ensureDirectory } from "../../../ensure-directory.js";
import { hasBlocked, hasBreaking, hasChanges } from "../../../plan/plan.js";
import type { Plan } from "../../../plan/plan.js";
import type { PlanFormat } from "../../../plan/render/render.js";
import { runPlan } from "../../../run/run-plan.js";
import { invocationWith } from "../../../printed-commands.js";
import type { SelectionRequest } from "../../../select/selection.js";
import { RepositoryValidator } from "../../../validate/repository/repository-validator.js";
import type { CliIo } from "../../common/cli-io.js";
import { givenStateUrl } from "../../common/cli-io.js";
import { checkStateRequired, openPlanOwnership, openPlanState } from "./plan-state.js";
import { commandSettings, forMergeRequest } from "../../common/command-settings.js";
import type { PlanStateFlags } from "./plan-state.js";
import type { SelectionFlags } from "../../common/selection-options.js";
import type { CommandResources } from "../../common/resources.js";

/** What `gatesync plan` reads from its flags (plan-command.ts declares them). */
export type PlanFlags = SelectionFlags &
  PlanStateFlags & {
    config: string;
    format: PlanFormat;
    out?: string;
    detailedExitcode?: boolean;
    failOnBreaking?: boolean;
    dir?: string;
    allowMassDeactivation?: boolean;
    env?: string;
  };

/** `--detailed-exitcode`: 3 when a change is blocked (it needs a person), else 2 with changes, else 0. */
export function detailedExitCode(plan: Plan): number {
  if (hasBlocked(plan)) return 3;
  return hasChanges(plan) ? 2 : 0;
}

/** Writes a plan's JSON for `apply --plan`, or says why it cannot. */
export async function savePlan(out: string, json: Iterable<string>): Promise<void> {
  await ensureDirectory(path.dirname(path.resolve(out)))
    .then(async () => writeFile(out, json))
    .catch((err: unknown) => {
      throw new UsageError(
        `cannot save the plan to ${out}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
        "give --out a path in a writable directory",
      );
    });
}

/** 4 with --fail-on-breaking and a breaking change; else --detailed-exitcode's, or 0. */
export function planExitCode(plan: Plan, opts: Pick<PlanFlags, "failOnBreaking" | "detailedExitcode">): number {
  if (opts.failOnBreaking === true && hasBreaking(plan)) return 4;
  return opts.detailedExitcode === true ? detailedExitCode(plan) : 0;
}

/** A plan and the rules' findings of one (effective) config, against the state the flags name. */
export async function computePlanRun(
  config: GatesyncConfig,
  resources: CommandResources,
  opts: PlanFlags,
  selection: SelectionRequest | undefined,
  io: CliIo,
): Promise<{ readonly plan: Plan; readonly ruleFindings: readonly Diagnostic[] }> {
  // the commit's team settings, as the daemon runs it; a merge request's job takes no operator setting from its checkout
  // with the daemon's address and no --state, the targets' settings are the daemon's already (plan-daemon.ts)
  const targetsFromDaemon = opts.state === undefined && givenStateUrl(io.env, opts) !== undefined;
  const settings = await commandSettings(config, resources.input, {
    fromSource: opts.dir === undefined,
    mergeRequest: forMergeRequest(io.env, opts),
    targetsFromDaemon,
  });
  config = settings.config;
  for (const note of settings.notes) io.stderr(`${formatDiagnostic(note)}\n`);
  const state = await openPlanState(config, io.env, opts);
  const ownership = openPlanOwnership(config, io.env, opts);
  try {
    // a plan only: the state's payloads are read only where the plan compares them
    const computed = await runPlan({
      config,
      ...resources.input,
      validator: RepositoryValidator.oneShot(),
      state,
      ...(ownership === undefined ? {} : { ownership }),
      env: io.env,
      payloads: "needed",
      keep: "plan",
      // a JSON plan prints every document: kept from validation, not read and parsed again
      ...(opts.format === "json" || opts.out !== undefined ? { printsDocuments: true } : {}),
      ...(selection === undefined ? {} : { selection }),
      ...(opts.allowMassDeactivation === true ? { allowMassDeactivation: true } : {}),
      invocation: invocationWith(config, opts.dir),
    });
    checkStateRequired(computed.plan.state.serial, state.description, io.env, opts);
    // the header says which state, and loudly when it is empty
    return {
      ruleFindings: computed.ruleFindings,
      plan: {
        ...computed.plan,
        state: { ...computed.plan.state, source: state.description, ...(computed.plan.state.serial === 0 ? { empty: true } : {}) },
      },
    };
  } finally {
    await state.close();
    await ownership?.close();
  }
}
