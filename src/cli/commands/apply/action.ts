import { readFile } from "node:fs/promises";
import type { Dispatcher } from "undici";
import { managementDispatcher } from "../../../apply/http-client.js";
import { terminalProgress } from "../../../apply/progress.js";
import { runApply } from "../../../run/run-apply.js";
import type { Progress } from "../../../apply/types.js";
import type { ApplyRunResult } from "../../../run/run-apply.js";
import { applySucceeded, renderSummary } from "../../../apply/summary.js";
import { commandFor, invocationWith, printedCommand, withInvocation } from "../../../printed-commands.js";
import type { Invocation } from "../../../printed-commands.js";
import { ErrorCode, UsageError, ValidationFailed } from "../../../errors.js";
import { createLogger } from "../../../logger.js";
import type { Plan } from "../../../plan/plan.js";
import { planChunks } from "../../../plan/render/render.js";
import { openOwnership } from "../../../record/ownership/open-ownership.js";
import { openStateBackend } from "../../../record/open-backend.js";
import { painter } from "../../../text/style.js";
import { RepositoryValidator } from "../../../validate/repository/repository-validator.js";
import { SchemaRegistry } from "../../../validate/schema/schema-registry.js";
import type { CliIo } from "../../common/cli-io.js";
import { configOrDefault, writeChunks } from "../../common/cli-io.js";
import { applyReview, rememberApplied } from "./review.js";
import type { StateTrustFlags } from "./review.js";
import { ask } from "../../common/ask.js";
import { oneEnvironment, unmovedStateHint } from "../../common/environment-option.js";
import { interruptOnSignals, signalExitCode } from "./interrupt.js";
import type { Interrupt } from "./interrupt.js";
import { openResources } from "../../common/resources.js";
import { commandSettings } from "../../common/command-settings.js";
import { applySelection } from "../../common/selection-options.js";
import type { SelectionFlags } from "../../common/selection-options.js";
import { HeldValue } from "../../../deferred.js";

/** What `gatesync apply` reads from its flags (apply-command.ts declares them). */
export type ApplyFlags = SelectionFlags & {
  config: string;
  plan?: string;
  autoApprove?: boolean;
  dir?: string;
  allowMassDeactivation?: boolean;
  env?: string;
} & StateTrustFlags;

async function readSavedPlan(file: string): Promise<Plan> {
  let text: string;
  try {
    text = await readFile(file, "utf8");
  } catch (err) {
    throw new UsageError(
      `cannot read the saved plan ${file}: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      "give the file written by `gatesync plan --out FILE`",
    );
  }
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new UsageError(
      `${file} is not a gatesync plan: it is not JSON`,
      "give the file written by `gatesync plan --out FILE` (not the text or markdown output)",
    );
  }
  if (value !== null && typeof value === "object" && "environments" in value && !("changes" in value)) {
    const names = Object.keys((value as { environments: object }).environments);
    throw new UsageError(
      `${file} holds the plans of environments ${names.join(", ")}: apply takes one environment's plan`,
      `save it with \`${commandFor(printedCommand("plan"), { env: names[0] ?? "NAME" })} --out FILE\` and apply that file with the same --env`,
    );
  }
  const issues = new SchemaRegistry().validate("plan.schema.json", value);
  if (issues.length > 0) {
    throw new ValidationFailed(
      issues.map((i) => ({ severity: "error", code: ErrorCode.USAGE, file, path: i.path.join("."), message: `not a gatesync plan: ${i.message}` })),
    );
  }
  // the schema says digest is a string: held as the Deferred a made plan carries
  const saved = value as Omit<Plan, "digest"> & { readonly digest: string };
  return { ...saved, digest: new HeldValue(saved.digest) };
}

/** `gatesync apply`. */
export async function applyAction(opts: ApplyFlags, io: CliIo): Promise<void> {
  const top = await configOrDefault(opts.config);
  const environment = oneEnvironment(top, opts.env, "apply");
  const config = environment.config;
  const unmoved = unmovedStateHint(top, environment);
  if (unmoved !== undefined) io.stderr(`note: ${unmoved}\n`);
  const savedPlan = opts.plan === undefined ? undefined : await readSavedPlan(opts.plan);
  const selection = applySelection(opts, savedPlan, config.selector);
  const interactive = io.isTty && process.stdin.isTTY === true;
  if (savedPlan === undefined && opts.autoApprove !== true && !interactive) {
    throw new UsageError("refusing to apply without confirmation", "pass --auto-approve, or apply a reviewed plan with --plan FILE");
  }
  const color = io.isTty && io.env.NO_COLOR === undefined;
  const logger = createLogger({ level: io.env.GATESYNC_LOG_LEVEL ?? (io.isTty ? "warn" : "info") });
  const resources = await openResources(config, io.env, opts.dir);
  const state = openStateBackend(config, io.env);
  const ownership = openOwnership(config, io.env);
  const place = { configDir: top.baseDir, environment, stateDescription: state.description };
  const dispatcher = managementDispatcher();
  const progress = io.isTty ? terminalProgress(process.stderr) : undefined;
  const interrupt = stopOnSignals(io, { progress, dispatcher, timeoutMs: config.retries.timeoutMs });
  try {
    const result = await runApply({
      // the commit's team settings, as the daemon applies it (run/effective-settings.ts)
      config: (await commandSettings(config, resources.input, { fromSource: opts.dir === undefined, mergeRequest: false })).config,
      ...resources.input,
      validator: RepositoryValidator.oneShot(),
      state,
      ownership,
      env: io.env,
      logger,
      dispatcher,
      ...(savedPlan === undefined ? {} : { savedPlan }),
      ...(selection === undefined ? {} : { selection }),
      ...(opts.allowMassDeactivation === true ? { allowMassDeactivation: true } : {}),
      invocation: invocationWith(config, opts.dir),
      review: applyReview(place, opts, io, { plan: savedPlan !== undefined || opts.autoApprove === true, color }),
      ...(savedPlan === undefined && opts.autoApprove !== true
        ? {
            confirm: async (plan: Plan) => {
              await writeChunks(io, planChunks(plan, "text", { color }));
              return ask("\nApply these changes? Only 'yes' is accepted: ", interrupt.signal);
            },
          }
        : {}),
      ...(progress === undefined ? {} : { progress }),
      signal: interrupt.signal,
    });
    progress?.stop();
    if ("stateAfter" in result) await rememberApplied(place, result.stateAfter, io);
    reportApply(result, io, color, interrupt.received(), invocationWith(config, opts.dir));
  } finally {
    progress?.stop();
    await state.close().then(async () => ownership.close());
    await resources.close();
    await dispatcher.close().catch(() => undefined);
    interrupt.dispose();
    logger.flush();
  }
}

/** Ctrl-C and SIGTERM during the apply (interrupt.ts): what each one does, said on stderr. */
function stopOnSignals(io: CliIo, apply: { readonly progress: Progress | undefined; readonly dispatcher: Dispatcher; readonly timeoutMs: number }): Interrupt {
  return interruptOnSignals({
    onStop: (signal) => {
      // the bar gives the terminal back (cursor, line wrapping) before anything else is written
      apply.progress?.stop();
      const again = signal === "SIGINT" ? "Press Ctrl-C again" : `Send ${signal} again`;
      io.stderr(
        `\n${signal}: stopping — no new calls; waiting for the calls in flight (each within retries.timeoutMs, ${apply.timeoutMs} ms) to record what they did. ${again} to stop waiting (those calls are then recorded in doubt).\n`,
      );
    },
    onAbandon: () => {
      io.stderr("Not waiting any longer: the connections are closed; calls still in flight are recorded in doubt.\n");
      apply.dispatcher.destroy().catch(() => undefined);
    },
    onIgnored: () => io.stderr("Already stopping: the outcomes are being recorded in the state.\n"),
  });
}

/** The summary, then why the apply stopped; the exit code says how it ended. */
function reportApply(result: ApplyRunResult, io: CliIo, color: boolean, stoppedBy: NodeJS.Signals | undefined, inv: Invocation): void {
  if ("declined" in result) {
    io.stdout("Apply cancelled.\n");
    process.exitCode = stoppedBy === undefined ? 1 : signalExitCode(stoppedBy);
    return;
  }
  io.stdout(renderSummary(result.summary, painter(color), inv));
  // the summary first (what reached the servers), then why the apply stopped
  if (result.summary.stateFailure !== undefined) throw result.summary.stateFailure;
  const blocked = result.summary.blocked;
  if (blocked.length > 0)
    io.stdout(
      `${painter(color)("yellow", withInvocation(`Blocked, not applied (exit code 3; \`gatesync plan\` says why and what to do): ${blocked.join(", ")}`, inv))}\n`,
    );
  // refused for their owner (docs/user/teams.md): named here, since the apply's check under the lock may refuse what the plan shown did not
  for (const c of result.plan.changes) if (c.ownedBy !== undefined && c.action === "blocked" && c.reason !== undefined) io.stdout(`  ${c.reason}\n`);
  if (stoppedBy !== undefined) {
    const left = result.summary.skipped.length;
    io.stdout(
      `${painter(color)("yellow", withInvocation(`Stopped by ${stoppedBy}${left > 0 ? `: ${left} change${left === 1 ? "" : "s"} not started — \`gatesync apply\` again applies ${left === 1 ? "it" : "them"}` : ""}.`, inv))}\n`,
    );
    process.exitCode = signalExitCode(stoppedBy);
    return;
  }
  process.exitCode = applySucceeded(result.summary) ? (blocked.length > 0 ? 3 : 0) : 1;
}
