import type { GatesyncConfig } from "../../../config/config.js";
import { ValidationFailed, formatDiagnostic } from "../../../errors.js";
import { painter } from "../../../text/style.js";
import { refusedPlanMarkdown, rulesSection } from "../../../plan/render/rules-markdown.js";
import { hasBreaking } from "../../../plan/plan.js";
import { planChunks } from "../../../plan/render/render.js";
import type { CliIo } from "../../common/cli-io.js";
import { configOrDefault, givenStateUrl, writeChunks } from "../../common/cli-io.js";
import { daemonEnvironments, daemonSettings } from "./daemon-plan.js";
import type { DaemonPlanTargets } from "./daemon-plan.js";
import { stateTokenVariable } from "../../../secrets/credentials.js";
import type { PlanFlags } from "./one-environment.js";
import { openResources } from "../../common/resources.js";
import { environmentsForFlag, unmovedStateHint } from "../../common/environment-option.js";
import { daemonHeldNote, planEnvironments } from "./every-environment.js";
import { plainText } from "../../../plan/render/markdown-inline.js";
import { computePlanRun, planExitCode, savePlan } from "./one-environment.js";
import { selectionFromFlags } from "../../common/selection-options.js";

/** `gatesync plan`: every environment without --env, else the one it names. */
export async function planAction(given: PlanFlags, io: CliIo): Promise<void> {
  const selection = selectionFromFlags(given);
  const top = await configOrDefault(given.config);
  const daemon = await daemonTargets(top, given, io);
  const environments = daemon?.environments.map((d) => d.environment) ?? environmentsForFlag(top, given.env);
  if (environments.length > 1 || (daemon?.notRun.length ?? 0) > 0) {
    await planEnvironments(environments, given, selection, io, top, daemon);
    return;
  }
  const config = environments[0]!.config;
  const opts = daemon === undefined ? given : { ...given, stateUrl: daemon.environments[0]!.stateUrl };
  const unmoved = daemon === undefined ? unmovedStateHint(top, environments[0]!) : undefined;
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
    const held = daemonHeldNote(daemon, io);
    if (held !== undefined && opts.format === "text") io.stdout(`held: ${held}\n`);
    // a change at a time: a large plan is never one string in memory
    await writeChunks(io, planChunks(run.plan, opts.format, { color }));
    if (opts.format === "markdown") io.stdout(rulesSection(run.ruleFindings) + (held === undefined ? "" : `\n> ⏸ **held**: ${plainText(held)}\n`));
    if (opts.out !== undefined) await savePlan(opts.out, planChunks(run.plan, "json"));
    if (opts.failOnBreaking === true && hasBreaking(run.plan)) {
      io.stderr(`${run.plan.summary.breaking} planned change${run.plan.summary.breaking === 1 ? " is" : "s are"} breaking (--fail-on-breaking): exit code 4\n`);
    }
    process.exitCode = planExitCode(run.plan, opts);
  } finally {
    await resources.close();
  }
}

/**
 * With the daemon's address (--state-url, GATESYNC_STATE_URL) and no --state: the environments
 * as the daemon runs them (plan-daemon.ts), each planned against its state there.
 */
async function daemonTargets(top: GatesyncConfig, opts: PlanFlags, io: CliIo): Promise<DaemonPlanTargets | undefined> {
  const address = givenStateUrl(io.env, opts);
  if (address === undefined || opts.state !== undefined) return undefined;
  return daemonEnvironments(top, await daemonSettings(address, io.env[stateTokenVariable]), opts.env);
}
