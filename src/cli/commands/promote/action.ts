/**
 * The actions of `gatesync promote` and `gatesync rollback` (promote-command.ts declares them):
 * POST /environments/NAME/promote of the daemon `--daemon` or GATESYNC_DAEMON_URL names, with the
 * token of the variable gatesync.yaml's server.promoteTokenEnv names (GATESYNC_PROMOTE_TOKEN when
 * there is no gatesync.yaml or it names none). A rollback shows its plan and what it cannot undo,
 * then asks (or takes --auto-approve).
 */
import path from "node:path";
import { boundText } from "../../../text/bounded-text.js";
import { ErrorCode, PromotionError, UsageError } from "../../../errors.js";
import { invocationOf, withInvocation } from "../../../printed-commands.js";
import { promoteTokenVariable } from "../../../secrets/credentials.js";
import { ask } from "../../common/ask.js";
import type { CliIo } from "../../common/cli-io.js";
import { configIfPresent } from "../../common/cli-io.js";
import { askDaemon, daemonAddress, unreachableError } from "../../common/daemon-client.js";

export const daemonUrlVariable = "GATESYNC_DAEMON_URL";

export interface PromoteOptions {
  readonly revision?: string;
  readonly dryRun?: boolean;
  readonly overrideFreeze?: boolean;
  readonly daemon?: string;
  readonly config?: string;
}

export interface RollbackOptions {
  readonly to?: string;
  readonly steps?: number;
  readonly forward?: boolean;
  readonly dryRun?: boolean;
  readonly autoApprove?: boolean;
  readonly overrideFreeze?: boolean;
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
  readonly notes: readonly string[];
  readonly alreadyInForce: boolean;
  /** The freeze or closed window the environment is held by. */
  readonly held?: string;
}

/** Where the daemon is, and the token to send it. */
export async function daemonOf(opts: { daemon?: string; config?: string }, io: CliIo): Promise<{ url: string; token: string; config?: string }> {
  const url = opts.daemon ?? io.env[daemonUrlVariable];
  if (url === undefined || url === "")
    throw new UsageError(`no daemon to ask: give --daemon URL or set ${daemonUrlVariable}`, "the daemon's server address, e.g. http://127.0.0.1:9464");
  // checked here, once: the promote address is built on it
  daemonAddress(url, opts.daemon === undefined ? daemonUrlVariable : "--daemon");
  const variable = (await configIfPresent(opts.config))?.server.promoteTokenEnv ?? promoteTokenVariable;
  const token = io.env[variable];
  if (token === undefined || token === "")
    throw new UsageError(
      `${variable} is not set: a promotion is sent with the daemon's promotion token`,
      "set it to the value of the daemon's server.promoteTokenEnv variable",
    );
  return { url: url.replace(/\/+$/, ""), token, ...(opts.config === undefined ? {} : { config: opts.config }) };
}

/** The largest answer read: a promotion's plan, as the daemon prints it (some 200 bytes a change). */
const maxAnswerBytes = 16 * 1024 * 1024;

/** The answer's JSON object, or undefined (not JSON, or not an object). */
function parsedAnswer(text: string): Readonly<Record<string, unknown>> | undefined {
  try {
    const v: unknown = JSON.parse(text);
    return v !== null && typeof v === "object" && !Array.isArray(v) ? (v as Record<string, unknown>) : undefined;
  } catch {
    return undefined;
  }
}

/** The daemon's answer as a promotion's, checked: anything else at that address is said, not trusted. */
function answerOf(a: Readonly<Record<string, unknown>> | undefined, where: string): Answer {
  const texts = a !== undefined && ["environment", "revision", "from", "plan"].every((k) => typeof a[k] === "string");
  const strings = (v: unknown): v is string[] => Array.isArray(v) && v.every((c) => typeof c === "string");
  if (!texts || typeof a.changes !== "number" || !strings(a.cannotUndo) || (a.notes !== undefined && !strings(a.notes)))
    throw new UsageError(`the answer of ${where} is not a promotion's`, `check --daemon / ${daemonUrlVariable}: it is the daemon's server address`);
  const line = (x: string): string => boundText(x, 200);
  // printed as they are: no control character reaches the terminal
  return {
    environment: line(a.environment as string),
    revision: line(a.revision as string),
    from: line(a.from as string),
    plan: boundText(a.plan as string, maxAnswerBytes),
    changes: a.changes,
    cannotUndo: a.cannotUndo.map((c) => boundText(c, 2_000)),
    notes: (a.notes ?? []).slice(0, 20).map((c) => boundText(c, 2_000)),
    alreadyInForce: a.alreadyInForce === true,
    ...(typeof a.held === "string" ? { held: line(a.held) } : {}),
  };
}

/**
 * The daemon's hint as the operator follows it: the commands it quotes carry the `-c` this
 * command was given (the file naming the promotion token's variable), built by printed-commands.ts.
 */
const hintFor = (hint: string, config: string | undefined): string =>
  config === undefined ? hint : withInvocation(hint, invocationOf({ file: path.resolve(config) }));

async function send(daemon: { url: string; token: string; config?: string }, env: string, body: object): Promise<Answer> {
  const where = `${daemon.url}/environments/${encodeURIComponent(env)}/promote`;
  const res = await askDaemon(new URL(where), {
    token: daemon.token,
    body,
    // a promotion's dry run plans against the target's state first
    timeoutMs: 120_000,
    maxBytes: maxAnswerBytes,
    unreachable: (why) => unreachableError(`cannot reach the daemon at ${daemon.url}`, why, `check --daemon / ${daemonUrlVariable}`),
  });
  const text = res.text;
  const parsed = parsedAnswer(text);
  // its words reach the terminal: bounded, no control character
  const said = (x: unknown, fallback: string): string => boundText(typeof x === "string" ? x : fallback, 2_000);
  if (res.status === 409)
    throw new PromotionError(
      said(parsed?.error, "refused"),
      typeof parsed?.hint === "string" ? { hint: hintFor(said(parsed.hint, ""), daemon.config) } : {},
      promotionCode(parsed?.code),
    );
  if (res.status === 401)
    throw new UsageError("the daemon refused the promotion token (401)", "set the variable to the value of the daemon's server.promoteTokenEnv variable");
  if (res.status >= 300) throw new UsageError(`the daemon answered ${res.status}: ${said(parsed?.error, text.slice(0, 200))}`);
  return answerOf(parsed, where);
}

/** The daemon's code of a refusal, when it is one of promotion's (anything else: PROMOTION_REFUSED). */
function promotionCode(code: unknown): typeof ErrorCode.PROMOTION_REFUSED | typeof ErrorCode.PROMOTION_NOT_EARLIER | typeof ErrorCode.PROMOTION_AMBIGUOUS {
  return code === ErrorCode.PROMOTION_NOT_EARLIER || code === ErrorCode.PROMOTION_AMBIGUOUS ? code : ErrorCode.PROMOTION_REFUSED;
}

const short = (revision: string): string => revision.slice(0, 12);

/** The answer's notes (a newer revision soaking in the source), before what was done. */
const showNotes = (io: CliIo, a: Answer): void => {
  for (const note of a.notes) io.stdout(`note: ${note}\n`);
};

function showPlan(io: CliIo, a: Answer): void {
  io.stdout(a.plan.endsWith("\n") ? a.plan : `${a.plan}\n`);
}

export async function promoteAction(env: string, opts: PromoteOptions, io: CliIo): Promise<void> {
  const daemon = await daemonOf(opts, io);
  const override = opts.overrideFreeze === true ? { overrideFreeze: true } : {};
  const answer = await send(daemon, env, { ...(opts.revision === undefined ? {} : { revision: opts.revision }), dryRun: opts.dryRun === true, ...override });
  showNotes(io, answer);
  if (answer.alreadyInForce) {
    io.stdout(`${short(answer.revision)} is already in force in ${env}: nothing promoted\n`);
    return;
  }
  if (opts.dryRun === true) {
    showPlan(io, answer);
    io.stdout(
      `dry run: promoting ${short(answer.revision)} from ${answer.from} to ${env} would apply ${answer.changes} change${answer.changes === 1 ? "" : "s"}; nothing promoted\n`,
    );
    return;
  }
  const through = answer.held === undefined ? "" : ` through the hold (${answer.held}; recorded in its history)`;
  io.stdout(`promoted ${short(answer.revision)} from ${answer.from} to ${env}${through}: ${env} applies it now\n`);
}

export async function rollbackAction(env: string, opts: RollbackOptions, io: CliIo): Promise<void> {
  if ((opts.to === undefined) === (opts.steps === undefined)) throw new UsageError("give --to SHA or --steps N (one of them)");
  if (opts.forward === true && opts.to === undefined) throw new UsageError("--forward goes to a revision: give --to SHA");
  const daemon = await daemonOf(opts, io);
  const rollback = { ...(opts.steps === undefined ? {} : { steps: opts.steps }), ...(opts.forward === true ? { forward: true } : {}) };
  const body = { ...(opts.to === undefined ? {} : { revision: opts.to }), rollback };
  const plan = await send(daemon, env, { ...body, dryRun: true });
  if (plan.alreadyInForce) {
    io.stdout(`${short(plan.revision)} is already in force in ${env}: nothing to roll back\n`);
    return;
  }
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
  const done = await send(daemon, env, { ...body, revision: plan.revision, dryRun: false, ...(opts.overrideFreeze === true ? { overrideFreeze: true } : {}) });
  const through = done.held === undefined ? "" : ` through the hold (${done.held}; recorded in its history)`;
  io.stdout(`rolled ${env} back to ${short(done.revision)}${through}: it stays there until the next promotion\n`);
}
