import { writeFile } from "node:fs/promises";
import path from "node:path";
import { UsageError, ValidationFailed, formatDiagnostic } from "../errors.js";
import { painter } from "../style.js";
import { refusedPlanMarkdown, rulesSection } from "../plan/rules-markdown.js";
import { hasBreaking } from "../plan/breaking/classify.js";
import { hasBlocked, hasChanges } from "../plan/plan.js";
import type { Plan } from "../plan/plan.js";
import { planChunks } from "../plan/render.js";
import { runPlan } from "../plan/run-plan.js";
import { ensureDirectory } from "../ensure-directory.js";
import { RepositoryValidator } from "../validate/validate-repository.js";
import { checkStateRequired, openPlanState } from "./plan-state.js";
import type { CliIo } from "./cli-io.js";
import { configOrDefault, writeChunks } from "./cli-io.js";
import type { PlanFlags } from "./plan-command.js";
import { openResources } from "./resources.js";
import { selectionFromFlags } from "./selection-options.js";

/** `--detailed-exitcode`: 3 when a change is blocked (it needs a person), else 2 with changes, else 0. */
export function detailedExitCode(plan: Plan): number {
  if (hasBlocked(plan)) return 3;
  return hasChanges(plan) ? 2 : 0;
}

/** `gatesync plan`. */
export async function planAction(opts: PlanFlags, io: CliIo): Promise<void> {
  const selection = selectionFromFlags(opts);
  const config = await configOrDefault(opts.config);
  const state = await openPlanState(config, io.env, opts);
  const resources = await openResources(config, io.env, opts.dir).catch(async (err: unknown) => {
    await state.close();
    throw err;
  });
  try {
    // a plan only: the state's payloads are read only where the plan compares them
    const computed = await runPlan({
      config,
      ...resources.input,
      validator: RepositoryValidator.oneShot(),
      state,
      env: io.env,
      payloads: "needed",
      keep: "plan",
      ...(selection === undefined ? {} : { selection }),
      ...(opts.allowMassDeactivation === true ? { allowMassDeactivation: true } : {}),
    }).catch((err: unknown) => {
      // the merge-request comment says why nothing was planned (the errors go to stderr too)
      if (err instanceof ValidationFailed && opts.format === "markdown") io.stdout(refusedPlanMarkdown(err.diagnostics));
      throw err;
    });
    checkStateRequired(computed.plan.state.serial, state.description, io.env, opts);
    // the header says which state, and loudly when it is empty
    const run = {
      ruleFindings: computed.ruleFindings,
      plan: {
        ...computed.plan,
        state: { ...computed.plan.state, source: state.description, ...(computed.plan.state.serial === 0 ? { empty: true } : {}) },
      },
    };
    const color = io.isTty && io.env.NO_COLOR === undefined;
    // the rules' warnings: on stderr beside a text or JSON plan, a section of the comment
    if (opts.format !== "markdown") for (const d of run.ruleFindings) io.stderr(`${formatDiagnostic(d, painter(color))}\n`);
    // a change at a time: a large plan is never one string in memory
    await writeChunks(io, planChunks(run.plan, opts.format, { color }));
    if (opts.format === "markdown") io.stdout(rulesSection(run.ruleFindings));
    if (opts.out !== undefined) {
      const out = opts.out;
      await ensureDirectory(path.dirname(path.resolve(out)))
        .then(async () => writeFile(out, planChunks(run.plan, "json")))
        .catch((err: unknown) => {
          throw new UsageError(
            `cannot save the plan to ${out}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
            "give --out a path in a writable directory",
          );
        });
    }
    if (opts.failOnBreaking === true && hasBreaking(run.plan)) {
      io.stderr(`${run.plan.summary.breaking} planned change${run.plan.summary.breaking === 1 ? " is" : "s are"} breaking (--fail-on-breaking): exit code 4\n`);
      process.exitCode = 4;
    } else {
      process.exitCode = opts.detailedExitcode === true ? detailedExitCode(run.plan) : 0;
    }
  } finally {
    await state.close();
    await resources.close();
  }
}
