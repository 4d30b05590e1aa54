/**
 * The action of `gatesync rollback` (command.ts declares it): sent to the daemon as a promotion
 * (cli/common/promotion-daemon.ts); its plan and what it cannot undo are shown first, then it asks
 * (or takes --auto-approve).
 */
import { UsageError } from "../../../errors.js";
import { ask } from "../../common/ask.js";
import type { CliIo } from "../../common/cli-io.js";
import { askPromotion, daemonOf, short, showPlan } from "../../common/promotion-daemon.js";

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

export async function rollbackAction(env: string, opts: RollbackOptions, io: CliIo): Promise<void> {
  if ((opts.to === undefined) === (opts.steps === undefined)) throw new UsageError("give --to SHA or --steps N (one of them)");
  if (opts.forward === true && opts.to === undefined) throw new UsageError("--forward goes to a revision: give --to SHA");
  const daemon = await daemonOf(opts, io);
  const rollback = { ...(opts.steps === undefined ? {} : { steps: opts.steps }), ...(opts.forward === true ? { forward: true } : {}) };
  const body = { ...(opts.to === undefined ? {} : { revision: opts.to }), rollback };
  const plan = await askPromotion(daemon, env, { ...body, dryRun: true });
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
  const done = await askPromotion(daemon, env, {
    ...body,
    revision: plan.revision,
    dryRun: false,
    ...(opts.overrideFreeze === true ? { overrideFreeze: true } : {}),
  });
  const through = done.held === undefined ? "" : ` through the hold (${done.held}; recorded in its history)`;
  io.stdout(`rolled ${env} back to ${short(done.revision)}${through}: it stays there until the next promotion\n`);
}
