/** `gatesync promote`: promotion through the daemon (docs/user/promotion.md). */
import type { Command } from "commander";
import type { CliIo } from "../../common/cli-io.js";
import { daemonOptionHelp } from "../../common/cli-io.js";
import { examplesText } from "../../common/help-examples.js";
import type { PromoteOptions } from "./action.js";

export function addPromoteCommand(program: Command, io: CliIo): void {
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
    .option("--daemon <url>", daemonOptionHelp)
    .option("-c, --config <file>", "gatesync.yaml (its server.promoteTokenEnv names the token's variable)")
    .action(async (env: string, opts: PromoteOptions) => (await import("./action.js")).promoteAction(env, opts, io));
}
