/**
 * What `gatesync promote`, `rollback`, `freeze` and `unfreeze` share: where the daemon is and the
 * promotion token to send it (`--daemon` or GATESYNC_DAEMON_URL; the token of the variable
 * gatesync.yaml's server.promoteTokenEnv names, GATESYNC_PROMOTE_TOKEN when there is no
 * gatesync.yaml or it names none), and their requests: POST /environments/NAME/promote, /freeze
 * or /unfreeze, the answers checked and bounded before they reach the terminal.
 */
import path from "node:path";
import { boundText } from "../../text/bounded-text.js";
import { ErrorCode, PromotionError, UsageError } from "../../errors.js";
import { invocationOf, withInvocation } from "../../printed-commands.js";
import { promoteTokenVariable } from "../../secrets/credentials.js";
import type { CliIo } from "./cli-io.js";
import { configIfPresent } from "./cli-io.js";
import { askDaemon, daemonAddress, unreachableError } from "./daemon-client.js";

export const daemonUrlVariable = "GATESYNC_DAEMON_URL";

/** The options of `freeze` and `unfreeze`. */
export interface FreezeOptions {
  readonly reason?: string;
  readonly until?: string;
  readonly daemon?: string;
  readonly config?: string;
}

export interface Answer {
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

/** What the daemon answered a POST to one of an environment's promotion routes: its status, its text, its JSON object (if it is one). */
interface DaemonAnswer {
  readonly status: number;
  readonly text: string;
  readonly parsed: Readonly<Record<string, unknown>> | undefined;
}

/** POST /environments/ENV/ROUTE with the promotion token, the answer bounded; a refused token said as such. */
async function postToEnvironment(
  daemon: { url: string; token: string },
  env: string,
  route: "promote" | "freeze" | "unfreeze",
  body: object,
  bounds: { readonly timeoutMs: number; readonly maxBytes: number },
): Promise<DaemonAnswer & { readonly where: string }> {
  const where = `${daemon.url}/environments/${encodeURIComponent(env)}/${route}`;
  const res = await askDaemon(new URL(where), {
    token: daemon.token,
    body,
    ...bounds,
    unreachable: (why) => unreachableError(`cannot reach the daemon at ${daemon.url}`, why, `check --daemon / ${daemonUrlVariable}`),
  });
  if (res.status === 401)
    throw new UsageError("the daemon refused the promotion token (401)", "set the variable to the value of the daemon's server.promoteTokenEnv variable");
  return { where, status: res.status, text: res.text, parsed: parsedAnswer(res.text) };
}

/** The daemon's words, as they reach the terminal: bounded, no control character; `fallback` when it said none. */
const said = (x: unknown, fallback: string): string => boundText(typeof x === "string" ? x : fallback, 2_000);

export async function askPromotion(daemon: { url: string; token: string; config?: string }, env: string, body: object): Promise<Answer> {
  // a promotion's dry run plans against the target's state first
  const { where, status, text, parsed } = await postToEnvironment(daemon, env, "promote", body, { timeoutMs: 120_000, maxBytes: maxAnswerBytes });
  if (status === 409)
    throw new PromotionError(
      said(parsed?.error, "refused"),
      typeof parsed?.hint === "string" ? { hint: hintFor(said(parsed.hint, ""), daemon.config) } : {},
      promotionCode(parsed?.code),
    );
  if (status >= 300) throw new UsageError(`the daemon answered ${status}: ${said(parsed?.error, text.slice(0, 200))}`);
  return answerOf(parsed, where);
}

/** The daemon's code of a refusal, when it is one of promotion's (anything else: PROMOTION_REFUSED). */
function promotionCode(code: unknown): typeof ErrorCode.PROMOTION_REFUSED | typeof ErrorCode.PROMOTION_NOT_EARLIER | typeof ErrorCode.PROMOTION_AMBIGUOUS {
  return code === ErrorCode.PROMOTION_NOT_EARLIER || code === ErrorCode.PROMOTION_AMBIGUOUS ? code : ErrorCode.PROMOTION_REFUSED;
}

export const short = (revision: string): string => revision.slice(0, 12);

/** The answer's notes (a newer revision soaking in the source), before what was done. */
export const showNotes = (io: CliIo, a: Answer): void => {
  for (const note of a.notes) io.stdout(`note: ${note}\n`);
};

export function showPlan(io: CliIo, a: Answer): void {
  io.stdout(a.plan.endsWith("\n") ? a.plan : `${a.plan}\n`);
}

/** POST /environments/ENV/freeze or /unfreeze: the daemon answers the hold in force. */
export async function askHold(
  env: string,
  action: "freeze" | "unfreeze",
  body: object,
  opts: FreezeOptions,
  io: CliIo,
): Promise<Readonly<Record<string, unknown>>> {
  const { status, text, parsed } = await postToEnvironment(await daemonOf(opts, io), env, action, body, { timeoutMs: 30_000, maxBytes: 64 * 1024 });
  if (status !== 200) throw new UsageError(`the daemon answered ${status}: ${said(parsed?.error, text.slice(0, 200))}`);
  return parsed ?? {};
}

/** The hold in force as the daemon says it, bounded. */
export const holdText = (answer: Readonly<Record<string, unknown>>): string | undefined => {
  const hold = answer.hold as { message?: unknown } | null | undefined;
  return typeof hold?.message === "string" ? boundText(hold.message, 500) : undefined;
};
