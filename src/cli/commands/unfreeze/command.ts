/** `gatesync unfreeze`: an environment's freeze lifted through the daemon (docs/user/promotion.md). */
import type { Command } from "commander";
import type { CliIo } from "../../common/cli-io.js";
import { daemonOptionHelp } from "../../common/cli-io.js";
import { examplesText } from "../../common/help-examples.js";
import type { FreezeOptions } from "../../common/promotion-daemon.js";

export function addUnfreezeCommand(program: Command, io: CliIo): void {
  program
    .command("unfreeze")
    .description("lift ENV's freeze through the daemon, with the promotion token: it applies what waited now")
    .argument("<env>", "the environment to unfreeze")
    .option("--reason <text>", "why (recorded in its history)")
    .option("--daemon <url>", daemonOptionHelp)
    .option("-c, --config <file>", "gatesync.yaml (its server.promoteTokenEnv names the token's variable)")
    .addHelpText("after", examplesText("unfreeze"))
    .action(async (env: string, opts: FreezeOptions) => (await import("./action.js")).unfreezeAction(env, opts, io));
}
