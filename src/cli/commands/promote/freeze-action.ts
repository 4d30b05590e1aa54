/**
 * The actions of `gatesync freeze` and `gatesync unfreeze` (promote-command.ts declares them):
 * POST /environments/NAME/freeze or /unfreeze of the daemon, with the promotion token, as
 * `gatesync promote` finds them (promote-action.ts). The daemon records the row and answers the
 * hold in force, which is printed as every page says it.
 */
import path from "node:path";
import { boundText } from "../../../text/bounded-text.js";
import { commandFor, invocationOf, printedCommand } from "../../../printed-commands.js";
import { parseDuration } from "../../../config/duration.js";
import { UsageError } from "../../../errors.js";
import type { CliIo } from "../../common/cli-io.js";
import { askDaemon, unreachableError } from "../../common/daemon-client.js";
import { daemonOf, daemonUrlVariable } from "./action.js";

export interface FreezeOptions {
  readonly reason?: string;
  readonly until?: string;
  readonly daemon?: string;
  readonly config?: string;
}

/** `--until` as an ISO time: given as one, or a duration from now. */
export function untilOf(text: string, now: number): string {
  if (/^\d+(ms|s|m|h|d)$/.test(text)) return new Date(now + parseDuration(text)).toISOString();
  const at = /^\d{4}-\d\d-\d\dT/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at))
    throw new UsageError(`--until ${JSON.stringify(text.slice(0, 80))} is neither an ISO time nor a duration`, "e.g. --until 2026-12-02T18:00Z or --until 2h");
  if (at <= now) throw new UsageError(`--until ${new Date(at).toISOString()} is not in the future`);
  return new Date(at).toISOString();
}

async function send(env: string, action: "freeze" | "unfreeze", body: object, opts: FreezeOptions, io: CliIo): Promise<Record<string, unknown>> {
  const daemon = await daemonOf(opts, io);
  const where = `${daemon.url}/environments/${encodeURIComponent(env)}/${action}`;
  const res = await askDaemon(new URL(where), {
    token: daemon.token,
    body,
    timeoutMs: 30_000,
    maxBytes: 64 * 1024,
    unreachable: (why) => unreachableError(`cannot reach the daemon at ${daemon.url}`, why, `check --daemon / ${daemonUrlVariable}`),
  });
  let parsed: Record<string, unknown> = {};
  try {
    parsed = JSON.parse(res.text) as Record<string, unknown>;
  } catch {
    // said below with the status
  }
  const said = (x: unknown): string => boundText(typeof x === "string" ? x : res.text.slice(0, 200), 2_000);
  if (res.status === 401)
    throw new UsageError("the daemon refused the promotion token (401)", "set the variable to the value of the daemon's server.promoteTokenEnv variable");
  if (res.status !== 200) throw new UsageError(`the daemon answered ${res.status}: ${said(parsed.error)}`);
  return parsed;
}

const holdText = (answer: Record<string, unknown>): string | undefined => {
  const hold = answer.hold as { message?: unknown } | null | undefined;
  return typeof hold?.message === "string" ? boundText(hold.message, 500) : undefined;
};

/** The command that lifts the freeze, with the `-c` this one was given (its token's variable is named there). */
const unfreezeCommand = (env: string, opts: FreezeOptions): string =>
  commandFor(printedCommand("unfreeze", env), opts.config === undefined ? {} : invocationOf({ file: path.resolve(opts.config) }));

export async function freezeAction(env: string, opts: FreezeOptions, io: CliIo): Promise<void> {
  const until = opts.until === undefined ? {} : { until: untilOf(opts.until, Date.now()) };
  const answer = await send(env, "freeze", { reason: opts.reason ?? "", ...until }, opts, io);
  io.stdout(
    `${holdText(answer) ?? `${env} frozen`}: it plans but applies and promotes nothing until \`${unfreezeCommand(env, opts)}\`${opts.until === undefined ? "" : " or then"}\n`,
  );
}

export async function unfreezeAction(env: string, opts: FreezeOptions, io: CliIo): Promise<void> {
  const answer = await send(env, "unfreeze", opts.reason === undefined ? {} : { reason: opts.reason }, opts, io);
  const still = holdText(answer);
  io.stdout(still === undefined ? `${env} unfrozen: it applies what waited now\n` : `${env} unfrozen, but still held: ${still}\n`);
}
