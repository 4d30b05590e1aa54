/**
 * `gatesync plan` without `--env` on a gatesync.yaml with several environments: each
 * environment planned against its own state, one section each (text, markdown) or one JSON
 * object keyed by environment, and one exit code — the worst environment's (an error, then
 * breaking changes with --fail-on-breaking, blocked, changes, none).
 */
import type { EnvironmentConfig } from "../../../config/environments.js";
import { GatesyncError, UsageError, ValidationFailed, formatDiagnostic } from "../../../errors.js";
import type { Diagnostic } from "../../../errors.js";
import { environmentsJson, environmentsMarkdown, environmentsTextHeading } from "../../../plan/render/render-environments.js";
import type { EnvironmentPlan } from "../../../plan/render/render-environments.js";
import { planChunks } from "../../../plan/render/render.js";
import type { SelectionRequest } from "../../../select/selection.js";
import { painter } from "../../../text/style.js";
import type { CliIo } from "../../common/cli-io.js";
import type { PlanFlags } from "./one-environment.js";
import { writeChunks } from "../../common/cli-io.js";
import { computePlanRun, planExitCode, savePlan } from "./one-environment.js";
import type { DaemonPlanTargets } from "./daemon-plan.js";
import { resourcesPerRef } from "../../common/resources.js";
import { unmovedStateHint } from "../../common/environment-option.js";
import type { GatesyncConfig } from "../../../config/config.js";
import { followedRef } from "../../../config/track-section.js";
import type { FollowedRef } from "../../../config/track-section.js";
import { mergeReach, targetBranchOf } from "../../../plan/render/merge-reach.js";
import { commandFor, printedCommand } from "../../../printed-commands.js";

/** Exit codes from best to worst: the worst environment decides. */
const severity = [0, 2, 3, 4, 1] as const;
const worse = (a: number, b: number): number => (severity.indexOf(a as 0) >= severity.indexOf(b as 0) ? a : b);

export async function planEnvironments(
  environments: readonly EnvironmentConfig[],
  opts: PlanFlags,
  selection: SelectionRequest | undefined,
  io: CliIo,
  top?: GatesyncConfig,
  daemon?: DaemonPlanTargets,
): Promise<void> {
  if (daemon === undefined && (opts.state !== undefined || opts.stateUrl !== undefined)) {
    throw new UsageError("--state and --state-url name one environment's state: plan one environment with them", {
      hint: `add --env, e.g. \`${commandFor(printedCommand("plan"), { env: environments[0]!.name })} --state …\``,
    });
  }
  // with the daemon's environments, each is planned against its own state there
  const stateUrlOf = new Map(daemon?.environments.map((d) => [d.environment.name, d.stateUrl]));
  const reachOf = mergeReaches(environments, daemon, targetBranchOf(io.env));
  const resources = resourcesPerRef(io.env, opts.dir);
  const results: EnvironmentPlan[] = [];
  try {
    for (const env of environments) {
      const unmoved = top === undefined || daemon !== undefined ? undefined : unmovedStateHint(top, env);
      if (unmoved !== undefined) io.stderr(`[${env.name}] note: ${unmoved}\n`);
      const stateUrl = stateUrlOf.get(env.name);
      try {
        const run = await computePlanRun(env.config, await resources.of(env.config), stateUrl === undefined ? opts : { ...opts, stateUrl }, selection, io);
        results.push({ environment: env.name, plan: run.plan, ruleFindings: run.ruleFindings, ...reachOf(env.name) });
      } catch (err) {
        // one environment that cannot be planned does not hide the others' plans
        if (!(err instanceof GatesyncError)) throw err;
        const diagnostics: readonly Diagnostic[] = err instanceof ValidationFailed ? err.diagnostics : [err.toDiagnostic()];
        results.push({ environment: env.name, refused: diagnostics, ...reachOf(env.name) });
      }
    }
  } finally {
    await resources.close();
  }
  await writeResults(results, opts, io, daemon?.notRun ?? []);
  // every environment's plan, keyed by name (a merge-request job keeps it beside the comment)
  if (opts.out !== undefined) await savePlan(opts.out, [environmentsJson(results)]);
  let exit = 0;
  for (const r of results) exit = worse(exit, r.plan === undefined ? 1 : planExitCode(r.plan, opts));
  process.exitCode = exit;
}

/**
 * Whether a merge reaches each environment (at once, when tagged, by promotion): what the daemon
 * says it follows, else (no daemon) the checkout's config.
 */
function mergeReaches(
  environments: readonly EnvironmentConfig[],
  daemon: DaemonPlanTargets | undefined,
  target: string | undefined,
): (name: string) => { reach?: string; held?: string } {
  const follows = new Map<string, FollowedRef | undefined>(
    daemon !== undefined
      ? daemon.environments.map((d) => [d.environment.name, d.follows])
      : environments.map((e) => [e.name, followedRef(e.config.source, e.config.track)]),
  );
  const holds = new Map(daemon?.environments.map((d) => [d.environment.name, d.hold]));
  return (name) => {
    const f = follows.get(name);
    const reach = f === undefined ? undefined : mergeReach(f, target);
    const held = heldNote(holds.get(name), reach);
    return { ...(reach === undefined ? {} : { reach }), ...(held === undefined ? {} : { held }) };
  };
}

/** The one environment of a daemon's plan (`--env`, or a daemon of one): the daemon's hold of it, as the comment says it. */
export function daemonHeldNote(daemon: DaemonPlanTargets | undefined, io: CliIo): string | undefined {
  const d = daemon?.environments[0];
  return heldNote(d?.hold, d?.follows === undefined ? undefined : mergeReach(d.follows, targetBranchOf(io.env)));
}

/** A held environment as the comment says it: the hold, and when a merge that reaches it is applied there. */
function heldNote(hold: string | undefined, reach: string | undefined): string | undefined {
  if (hold === undefined) return undefined;
  const reaches = reach === undefined || !reach.startsWith("does not reach");
  return reaches ? `${hold} — the merge is applied there when the hold lifts` : hold;
}

/** Said in the comment and on stderr: environments of the checkout the daemon does not run (it skips them). */
function notRunNote(notRun: readonly string[]): string {
  return `the daemon does not run ${notRun.map((n) => `\`${n}\``).join(", ")}: ${notRun.length === 1 ? "it is" : "they are"} not planned (which environments exist is the operator's setting)`;
}

async function writeResults(results: readonly EnvironmentPlan[], opts: PlanFlags, io: CliIo, notRun: readonly string[]): Promise<void> {
  const color = io.isTty && io.env.NO_COLOR === undefined;
  if (notRun.length > 0) io.stderr(`note: ${notRunNote(notRun)}\n`);
  for (const r of results) {
    const errors = r.refused?.filter((d) => d.severity === "error").length ?? 0;
    for (const d of r.refused ?? []) io.stderr(`[${r.environment}] ${formatDiagnostic(d, painter(color))}\n`);
    if (r.refused !== undefined) io.stderr(`[${r.environment}] invalid: ${errors} error(s): no plan made\n`);
    if (opts.format !== "markdown") for (const d of r.ruleFindings ?? []) io.stderr(`[${r.environment}] ${formatDiagnostic(d, painter(color))}\n`);
    if (r.plan !== undefined && opts.failOnBreaking === true && r.plan.summary.breaking > 0) {
      io.stderr(`[${r.environment}] ${r.plan.summary.breaking} planned change(s) breaking (--fail-on-breaking): exit code 4\n`);
    }
  }
  if (opts.format === "markdown") io.stdout(environmentsMarkdown(results) + (notRun.length === 0 ? "" : `\n> ${notRunNote(notRun)}\n`));
  else if (opts.format === "json") io.stdout(environmentsJson(results));
  else {
    for (const r of results) {
      io.stdout(environmentsTextHeading(r, color));
      if (r.plan !== undefined) await writeChunks(io, planChunks(r.plan, "text", { color }));
    }
  }
}
