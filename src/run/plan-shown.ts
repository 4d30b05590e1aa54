/**
 * What the planner is told besides the desired set and the state (the config's policies and the
 * run's), and the plan as gatesync shows it: the plan stage's two pure helpers (plan-stages.ts).
 */
import { repositoryPath } from "../file-paths.js";
import type { PlannedChange } from "../plan/plan-change.js";
import type { Plan, PlanOptions } from "../plan/plan.js";
import { withInvocation } from "../printed-commands.js";
import type { Invocation } from "../printed-commands.js";
import type { PlanRunInput } from "./run-types.js";

/** What the planner is told besides the desired set and the state: the config's policies and the run's. */
export function planOptions(
  input: PlanRunInput,
  hashKey: string,
  selection: PlanOptions["selection"],
  commit: string | undefined,
  ownership: PlanOptions["ownership"],
): PlanOptions {
  const { config } = input;
  const batch = config.targets.gateway?.batch;
  return {
    orphans: config.orphans,
    deactivationGuard: input.allowMassDeactivation === true ? { ...config.deactivationGuard, allow: true } : config.deactivationGuard,
    ...(batch === undefined ? {} : { batch: { maxSize: batch.maxSize } }),
    ...(commit === undefined ? {} : { commit }),
    now: (input.now ?? (() => new Date()))().toISOString(),
    hashKey,
    ...(input.reassert === true ? { reassert: true } : {}),
    ...(selection === undefined ? {} : { selection }),
    ...(ownership === undefined ? {} : { ownership }),
  };
}

/**
 * The plan as gatesync shows it: the commands its hints quote completed for this config
 * (`--env`, `-c`: printed-commands.ts), and each change's file named from the repository's root
 * (`prefix`), as findings are. Its digest stays the one of the changes as planned: a plan saved
 * in one directory applies from another.
 */
export function asShown(plan: Plan, inv: Invocation, prefix: string): Plan {
  const commands = inv.env !== undefined || inv.config !== undefined || inv.dir !== undefined;
  if (!commands && prefix === "") return plan;
  const quotes = (text: string | undefined): boolean => commands && text?.includes("`gatesync ") === true;
  const changes = plan.changes.map((c): PlannedChange => {
    if (!quotes(c.hint) && !quotes(c.reason) && (c.source === undefined || prefix === "")) return c;
    const { hint, reason, source, ...rest } = c;
    return {
      ...rest,
      ...(hint === undefined ? {} : { hint: withInvocation(hint, inv) }),
      ...(reason === undefined ? {} : { reason: withInvocation(reason, inv) }),
      ...(source === undefined ? {} : { source: { file: repositoryPath(prefix, source.file), line: source.line } }),
    };
  });
  return { ...plan, changes };
}
