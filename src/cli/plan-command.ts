import { existsSync } from "node:fs";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { Option } from "commander";
import type { Command } from "commander";
import { loadConfig } from "../config/config.js";
import type { GatesyncConfig } from "../config/config.js";
import { UsageError, ValidationFailed, formatDiagnostic } from "../errors.js";
import { painter } from "../style.js";
import { refusedPlanMarkdown, rulesSection } from "../plan/rules-markdown.js";
import { hasBreaking } from "../plan/breaking/classify.js";
import { hasBlocked, hasChanges } from "../plan/plan.js";
import type { Plan } from "../plan/plan.js";
import { planChunks } from "../plan/render.js";
import type { PlanFormat } from "../plan/render.js";
import { runPlan } from "../plan/run-plan.js";
import { stateTokenVariable } from "../secrets/credentials.js";
import { ensureDirectory } from "../ensure-directory.js";
import { RepositoryValidator } from "../validate/validate-repository.js";
import { checkStateRequired, openPlanState, stateUrlVariable } from "./plan-state.js";
import type { PlanStateFlags } from "./plan-state.js";
import { openResources } from "./resources.js";
import type { CommandResources } from "./resources.js";
import { envOptionHelp, environmentsForFlag, unmovedStateHint } from "./environment-option.js";
import { planEnvironments } from "./plan-environments.js";
import type { Diagnostic } from "../errors.js";
import type { SelectionRequest } from "../select/selection.js";
import { stateSpecHelp } from "./state-spec.js";
import { collect, massDeactivationHelp, selectionFromFlags, selectionHelp } from "./selection-options.js";
import type { SelectionFlags } from "./selection-options.js";

export interface CliIo {
  readonly stdout: (text: string) => void;
  readonly stderr: (text: string) => void;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly isTty: boolean;
  /** stdout without the redaction layer: only for the sandbox-only credentials `demo` generated itself. */
  readonly reveal?: (text: string) => void;
  /**
   * Resolves once stdout takes more: writes to a pipe are queued in memory when its reader is
   * slower (`gatesync plan | tee plan.txt`), and a plan of 100,000 resources is hundreds of MB.
   */
  readonly drained?: () => Promise<void>;
}

/** Writes `chunks` to stdout one after the other, waiting while stdout's queue is full. */
export async function writeChunks(io: CliIo, chunks: Iterable<string>): Promise<void> {
  for (const chunk of chunks) {
    io.stdout(chunk);
    if (io.drained !== undefined) await io.drained();
  }
}

export async function configOrDefault(file: string | undefined): Promise<GatesyncConfig> {
  return loadConfig(file ?? "gatesync.yaml");
}

/**
 * For commands that can work without a config (validate, state migrate, `--state SPEC`): the
 * one given with `-c`, else ./gatesync.yaml when there is one — found as every other command
 * finds it — else none.
 */
export async function configIfPresent(file: string | undefined): Promise<GatesyncConfig | undefined> {
  if (file !== undefined) return loadConfig(file);
  return existsSync("gatesync.yaml") ? loadConfig("gatesync.yaml") : undefined;
}

/** `--detailed-exitcode`: 3 when a change is blocked (it needs a person), else 2 with changes, else 0. */
export function detailedExitCode(plan: Plan): number {
  if (hasBlocked(plan)) return 3;
  return hasChanges(plan) ? 2 : 0;
}

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

export function addPlanCommand(program: Command, io: CliIo): void {
  program
    .command("plan")
    .description(
      "show what an apply would change (exit 0; with --detailed-exitcode: 0 no changes, 2 changes, 3 blocked changes present, 1 error; with --fail-on-breaking: 4 breaking changes)",
    )
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .addOption(new Option("--format <format>", "text, markdown (merge requests) or json").choices(["text", "markdown", "json"]).default("text"))
    .option("--out <file>", "also save the plan as JSON, for `gatesync apply --plan FILE`")
    .option("--detailed-exitcode", "exit 2 when there are changes to apply, 3 when some change is blocked (cannot be applied)")
    .option("--fail-on-breaking", "exit 4 when a planned change breaks an API's callers or takes access away (the plan is still written)")
    .option("--dir <dir>", "plan the resources in this directory (a checkout) instead of the config's source")
    .option("--state-url <url>", `plan against a running daemon's state (its GET /state, with the token in ${stateTokenVariable}); default ${stateUrlVariable}`)
    .option("--state <spec>", `plan against this state instead of the config's: ${stateSpecHelp} (a read-only role is enough)`)
    .option("--allow-empty-state", "plan even when the state is empty (never written), in CI too")
    .option("--require-state", "refuse to plan against an empty state (the default when CI is set)")
    .option("--target <Kind/name>", selectionHelp.target, collect)
    .option("--exclude <Kind/name>", selectionHelp.exclude, collect)
    .option("--kind <Kind>", selectionHelp.kind, collect)
    .option("--selector <expr>", selectionHelp.selector)
    .option("--allow-mass-deactivation", massDeactivationHelp)
    .option("--env <name>", envOptionHelp)
    .action(async (opts: PlanFlags) => {
      const selection = selectionFromFlags(opts);
      const top = await configOrDefault(opts.config);
      const environments = environmentsForFlag(top, opts.env);
      if (environments.length > 1) {
        await planEnvironments(environments, opts, selection, io, top);
        return;
      }
      const config = environments[0]!.config;
      const unmoved = unmovedStateHint(top, environments[0]!);
      if (unmoved !== undefined) io.stderr(`note: ${unmoved}\n`);
      const resources = await openResources(config, io.env, opts.dir);
      try {
        const run = await computePlanRun(config, resources, opts, selection, io).catch((err: unknown) => {
          // the merge-request comment says why nothing was planned (the errors go to stderr too)
          if (err instanceof ValidationFailed && opts.format === "markdown") io.stdout(refusedPlanMarkdown(err.diagnostics));
          throw err;
        });
        const color = io.isTty && io.env.NO_COLOR === undefined;
        // the rules' warnings: on stderr beside a text or JSON plan, a section of the comment
        if (opts.format !== "markdown") for (const d of run.ruleFindings) io.stderr(`${formatDiagnostic(d, painter(color))}\n`);
        // a change at a time: a large plan is never one string in memory
        await writeChunks(io, planChunks(run.plan, opts.format, { color }));
        if (opts.format === "markdown") io.stdout(rulesSection(run.ruleFindings));
        if (opts.out !== undefined) await savePlan(opts.out, planChunks(run.plan, "json"));
        if (opts.failOnBreaking === true && hasBreaking(run.plan)) {
          io.stderr(
            `${run.plan.summary.breaking} planned change${run.plan.summary.breaking === 1 ? " is" : "s are"} breaking (--fail-on-breaking): exit code 4\n`,
          );
        }
        process.exitCode = planExitCode(run.plan, opts);
      } finally {
        await resources.close();
      }
    });
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
  const state = await openPlanState(config, io.env, opts);
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
  }
}
