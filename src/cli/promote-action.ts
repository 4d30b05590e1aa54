/**
 * The actions of `gatesync promote` and `gatesync rollback` (promote-command.ts declares them):
 * POST /environments/NAME/promote of the daemon `--daemon` or GATESYNC_DAEMON_URL names, with the
 * token of the variable gatesync.yaml's server.promoteTokenEnv names (GATESYNC_PROMOTE_TOKEN when
 * there is no gatesync.yaml or it names none). A rollback shows its plan and what it cannot undo,
 * then asks (or takes --auto-approve).
 */
import { ErrorCode, PromotionError, StateError, UsageError } from "../errors.js";
import { promoteTokenVariable } from "../secrets/credentials.js";
import { registerSecret } from "../secrets/redaction.js";
import { ask } from "./ask.js";
import type { CliIo } from "./cli-io.js";
import { configIfPresent } from "./cli-io.js";

export const daemonUrlVariable = "GATESYNC_DAEMON_URL";

export interface PromoteOptions {
  readonly revision?: string;
  readonly dryRun?: boolean;
  readonly daemon?: string;
  readonly config?: string;
}

export interface RollbackOptions {
  readonly to?: string;
  readonly steps?: number;
  readonly dryRun?: boolean;
  readonly autoApprove?: boolean;
  readonly daemon?: string;
  readonly config?: string;
}

interface Answer {
  readonly environment: string;
  readonly revision: string;
  readonly from: string;
  readonly plan: string;
  readonly changes: number;
  readonly cannotUndo: readonly string[];
}

/** Where the daemon is, and the token to send it. */
async function daemonOf(opts: { daemon?: string; config?: string }, io: CliIo): Promise<{ url: string; token: string }> {
  const url = opts.daemon ?? io.env[daemonUrlVariable];
  if (url === undefined || url === "")
    throw new UsageError(`no daemon to ask: give --daemon URL or set ${daemonUrlVariable}`, "the daemon's server address, e.g. http://127.0.0.1:9464");
  const variable = (await configIfPresent(opts.config))?.server.promoteTokenEnv ?? promoteTokenVariable;
  const token = io.env[variable];
  if (token === undefined || token === "")
    throw new UsageError(
      `${variable} is not set: a promotion is sent with the daemon's promotion token`,
      "set it to the value of the daemon's server.promoteTokenEnv variable",
    );
  registerSecret(token);
  return { url: url.replace(/\/+$/, ""), token };
}

async function send(daemon: { url: string; token: string }, env: string, body: object): Promise<Answer> {
  const { request } = await import("undici");
  const where = `${daemon.url}/environments/${encodeURIComponent(env)}/promote`;
  let res;
  try {
    res = await request(where, {
      method: "POST",
      headers: { authorization: `Bearer ${daemon.token}`, "content-type": "application/json" },
      body: JSON.stringify(body),
      headersTimeout: 120_000,
    });
  } catch (err) {
    throw new StateError(ErrorCode.STATE_UNREACHABLE, `cannot reach the daemon at ${daemon.url}: ${(err as Error).message}`, {
      hint: `check --daemon / ${daemonUrlVariable}`,
    });
  }
  const text = await res.body.text();
  let parsed: { error?: string; hint?: string } & Partial<Answer>;
  try {
    parsed = JSON.parse(text) as typeof parsed;
  } catch {
    parsed = { error: text.slice(0, 200) };
  }
  if (res.statusCode === 409) throw new PromotionError(parsed.error ?? "refused", parsed.hint === undefined ? {} : { hint: parsed.hint });
  if (res.statusCode === 401)
    throw new UsageError("the daemon refused the promotion token (401)", "set the variable to the value of the daemon's server.promoteTokenEnv variable");
  if (res.statusCode >= 300) throw new UsageError(`the daemon answered ${res.statusCode}: ${parsed.error ?? text.slice(0, 200)}`);
  return parsed as Answer;
}

const short = (revision: string): string => revision.slice(0, 12);

function showPlan(io: CliIo, a: Answer): void {
  io.stdout(a.plan.endsWith("\n") ? a.plan : `${a.plan}\n`);
}

export async function promoteAction(env: string, opts: PromoteOptions, io: CliIo): Promise<void> {
  const daemon = await daemonOf(opts, io);
  const answer = await send(daemon, env, { ...(opts.revision === undefined ? {} : { revision: opts.revision }), dryRun: opts.dryRun === true });
  if (opts.dryRun === true) {
    showPlan(io, answer);
    io.stdout(
      `dry run: promoting ${short(answer.revision)} from ${answer.from} to ${env} would apply ${answer.changes} change${answer.changes === 1 ? "" : "s"}; nothing promoted\n`,
    );
    return;
  }
  io.stdout(`promoted ${short(answer.revision)} from ${answer.from} to ${env}: ${env} applies it now\n`);
}

export async function rollbackAction(env: string, opts: RollbackOptions, io: CliIo): Promise<void> {
  if ((opts.to === undefined) === (opts.steps === undefined)) throw new UsageError("give --to SHA or --steps N (one of them)");
  const daemon = await daemonOf(opts, io);
  const body = { ...(opts.to === undefined ? {} : { revision: opts.to }), rollback: opts.steps === undefined ? {} : { steps: opts.steps } };
  const plan = await send(daemon, env, { ...body, dryRun: true });
  showPlan(io, plan);
  if (plan.cannotUndo.length > 0) io.stdout(`The rollback cannot undo:\n${plan.cannotUndo.map((c) => `  ${c}\n`).join("")}`);
  if (opts.dryRun === true) {
    io.stdout(`dry run: rolling ${env} back to ${short(plan.revision)} would apply ${plan.changes} change${plan.changes === 1 ? "" : "s"}; nothing changed\n`);
    return;
  }
  if (opts.autoApprove !== true) {
    if (!io.isTty) throw new UsageError("a rollback asks before it starts: pass --auto-approve when no one is there to answer");
    if (!(await ask(`Roll ${env} back to ${short(plan.revision)}? Only 'yes' is accepted: `, new AbortController().signal))) {
      io.stderr("rollback cancelled: nothing changed\n");
      process.exitCode = 1;
      return;
    }
  }
  const done = await send(daemon, env, { ...body, revision: plan.revision, dryRun: false });
  io.stdout(`rolled ${env} back to ${short(done.revision)}: it stays there until the next promotion\n`);
}
