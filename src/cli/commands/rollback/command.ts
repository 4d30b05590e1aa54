/** `gatesync rollback`: an environment put back on an earlier revision through the daemon, as a promotion (docs/user/promotion.md). */
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import type { CliIo } from "../../common/cli-io.js";
import { daemonOptionHelp } from "../../common/cli-io.js";
import { examplesText } from "../../common/help-examples.js";
import type { RollbackOptions } from "./action.js";

function stepsOf(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1 || n > 1000) throw new InvalidArgumentError("give a whole number from 1");
  return n;
}

export function addRollbackCommand(program: Command, io: CliIo): void {
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
    .option("--daemon <url>", daemonOptionHelp)
    .option("-c, --config <file>", "gatesync.yaml (its server.promoteTokenEnv names the token's variable)")
    .action(async (env: string, opts: RollbackOptions) => (await import("./action.js")).rollbackAction(env, opts, io));
}
