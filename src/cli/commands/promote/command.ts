/** `gatesync promote` and `gatesync rollback`: promotion through the daemon (docs/user/promotion.md). */
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import type { CliIo } from "../../common/cli-io.js";
import { examplesText } from "../../common/help-examples.js";
import type { PromoteOptions, RollbackOptions } from "./action.js";
import type { FreezeOptions } from "./freeze-action.js";

const daemonHelp = "the daemon's address (default: GATESYNC_DAEMON_URL)";

function stepsOf(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new InvalidArgumentError("give a whole number from 1");
  return n;
}

export function addPromoteCommands(program: Command, io: CliIo): void {
  program
    .command("promote")
    .addHelpText("after", examplesText("promote"))
    .description(
      "promote a revision its source environment applied and verified to ENV (`track: { promotedFrom }`), through the daemon, with the promotion token (the variable server.promoteTokenEnv names, GATESYNC_PROMOTE_TOKEN by default)",
    )
    .argument("<env>", "the environment to promote to")
    .option("--revision <sha>", "the commit to promote (default: the source's newest verified one)")
    .option("--dry-run", "print the plan the promotion would apply against the environment's state; promote nothing")
    .option("--override-freeze", "promote although ENV is frozen or outside its sync window (recorded in its history)")
    .option("--daemon <url>", daemonHelp)
    .option("-c, --config <file>", "gatesync.yaml (its server.promoteTokenEnv names the token's variable)")
    .action(async (env: string, opts: PromoteOptions) => (await import("./action.js")).promoteAction(env, opts, io));
  program
    .command("rollback")
    .addHelpText("after", examplesText("rollback"))
    .description(
      "put ENV back on an earlier revision it applied and verified, as a promotion: the plan and what it cannot undo are shown first; ENV stays there until the next promotion",
    )
    .argument("<env>", "the environment to roll back")
    .option("--to <sha>", "the revision to go back to")
    .option("--steps <n>", "go back N revisions along what ENV applied and verified (`gatesync history --env ENV` marks them)", stepsOf)
    .option("--forward", "with --to: go to a revision that is not before the one in force (one a rollback left, or no longer in the history)")
    .option("--dry-run", "print the plan and what the rollback cannot undo; change nothing")
    .option("--auto-approve", "roll back without asking after the plan")
    .option("--override-freeze", "roll back although ENV is frozen or outside its sync window (recorded in its history)")
    .option("--daemon <url>", daemonHelp)
    .option("-c, --config <file>", "gatesync.yaml (its server.promoteTokenEnv names the token's variable)")
    .action(async (env: string, opts: RollbackOptions) => (await import("./action.js")).rollbackAction(env, opts, io));
  program
    .command("freeze")
    .description(
      "freeze ENV through the daemon, with the promotion token: it plans but applies and promotes nothing — schedule, webhooks, promotion: auto, rollbacks — until `gatesync unfreeze` or --until",
    )
    .argument("<env>", "the environment to freeze")
    .requiredOption("--reason <text>", 'why (every page, notification and refusal says it: "incident 4521")')
    .option("--until <time>", "lift it by itself at this time: an ISO time (2026-12-02T18:00Z) or a duration from now (2h)")
    .option("--daemon <url>", daemonHelp)
    .option("-c, --config <file>", "gatesync.yaml (its server.promoteTokenEnv names the token's variable)")
    .addHelpText("after", examplesText("freeze"))
    .action(async (env: string, opts: FreezeOptions) => (await import("./freeze-action.js")).freezeAction(env, opts, io));
  program
    .command("unfreeze")
    .description("lift ENV's freeze through the daemon, with the promotion token: it applies what waited now")
    .argument("<env>", "the environment to unfreeze")
    .option("--reason <text>", "why (recorded in its history)")
    .option("--daemon <url>", daemonHelp)
    .option("-c, --config <file>", "gatesync.yaml (its server.promoteTokenEnv names the token's variable)")
    .addHelpText("after", examplesText("unfreeze"))
    .action(async (env: string, opts: FreezeOptions) => (await import("./freeze-action.js")).unfreezeAction(env, opts, io));
}
