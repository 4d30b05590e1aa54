/**
 * The action of `gatesync promote` (command.ts declares it): the daemon promotes a revision its
 * source environment applied and verified (cli/common/promotion-daemon.ts sends it).
 */
import type { CliIo } from "../../common/cli-io.js";
import { askPromotion, daemonOf, short, showNotes, showPlan } from "../../common/promotion-daemon.js";

export interface PromoteOptions {
  readonly revision?: string;
  readonly dryRun?: boolean;
  readonly overrideFreeze?: boolean;
  readonly daemon?: string;
  readonly config?: string;
}

export async function promoteAction(env: string, opts: PromoteOptions, io: CliIo): Promise<void> {
  const daemon = await daemonOf(opts, io);
  const override = opts.overrideFreeze === true ? { overrideFreeze: true } : {};
  const answer = await askPromotion(daemon, env, {
    ...(opts.revision === undefined ? {} : { revision: opts.revision }),
    dryRun: opts.dryRun === true,
    ...override,
  });
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
