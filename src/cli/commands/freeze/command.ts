/** `gatesync freeze`: an environment held through the daemon (docs/user/promotion.md): it plans but applies and promotes nothing. */
import type { Command } from "commander";
import type { CliIo } from "../../common/cli-io.js";
import { daemonOptionHelp } from "../../common/cli-io.js";
import { examplesText } from "../../common/help-examples.js";
import type { FreezeOptions } from "../../common/promotion-daemon.js";

export function addFreezeCommand(program: Command, io: CliIo): void {
  program
    .command("freeze")
    .description(
      "freeze ENV through the daemon, with the promotion token: it plans but applies and promotes nothing — schedule, webhooks, promotion: auto, rollbacks — until `gatesync unfreeze` or --until",
    )
    .argument("<env>", "the environment to freeze")
    .requiredOption("--reason <text>", 'why (every page, notification and refusal says it: "incident 4521")')
    .option("--until <time>", "lift it by itself at this time: an ISO time (2026-12-02T18:00Z) or a duration from now (2h)")
    .option("--daemon <url>", daemonOptionHelp)
    .option("-c, --config <file>", "gatesync.yaml (its server.promoteTokenEnv names the token's variable)")
    .addHelpText("after", examplesText("freeze"))
    .action(async (env: string, opts: FreezeOptions) => (await import("./action.js")).freezeAction(env, opts, io));
}
