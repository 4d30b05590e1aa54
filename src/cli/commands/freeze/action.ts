/**
 * The action of `gatesync freeze` (command.ts declares it): POST /environments/NAME/freeze of the
 * daemon, with the promotion token (cli/common/promotion-daemon.ts). The daemon records the row
 * and answers the hold in force, which is printed as every page says it.
 */
import path from "node:path";
import { commandFor, invocationOf, printedCommand } from "../../../printed-commands.js";
import { parseDuration } from "../../../config/duration.js";
import { UsageError } from "../../../errors.js";
import type { CliIo } from "../../common/cli-io.js";
import { askHold, holdText } from "../../common/promotion-daemon.js";
import type { FreezeOptions } from "../../common/promotion-daemon.js";

/** `--until` as an ISO time: given as one, or a duration from now. */
export function untilOf(text: string, now: number): string {
  if (/^\d+(ms|s|m|h|d)$/.test(text)) return new Date(now + parseDuration(text)).toISOString();
  const at = /^\d{4}-\d\d-\d\dT/.test(text) ? Date.parse(text) : Number.NaN;
  if (Number.isNaN(at))
    throw new UsageError(`--until ${JSON.stringify(text.slice(0, 80))} is neither an ISO time nor a duration`, "e.g. --until 2026-12-02T18:00Z or --until 2h");
  if (at <= now) throw new UsageError(`--until ${new Date(at).toISOString()} is not in the future`);
  return new Date(at).toISOString();
}

/** The command that lifts the freeze, with the `-c` this one was given (its token's variable is named there). */
const unfreezeCommand = (env: string, opts: FreezeOptions): string =>
  commandFor(printedCommand("unfreeze", env), opts.config === undefined ? {} : invocationOf({ file: path.resolve(opts.config) }));

export async function freezeAction(env: string, opts: FreezeOptions, io: CliIo): Promise<void> {
  const until = opts.until === undefined ? {} : { until: untilOf(opts.until, Date.now()) };
  const answer = await askHold(env, "freeze", { reason: opts.reason ?? "", ...until }, opts, io);
  io.stdout(
    `${holdText(answer) ?? `${env} frozen`}: it plans but applies and promotes nothing until \`${unfreezeCommand(env, opts)}\`${opts.until === undefined ? "" : " or then"}\n`,
  );
}
