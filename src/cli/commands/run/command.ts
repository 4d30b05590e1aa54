import type { Command } from "commander";
import type { CliIo } from "../../common/cli-io.js";
import type { RunFlags } from "./action.js";
import { massDeactivationHelp } from "../../common/selection-options.js";
import { examplesText } from "../../common/help-examples.js";

export function addRunCommand(program: Command, io: CliIo): void {
  program
    .command("run")
    .addHelpText("after", examplesText("run"))
    .description("run the daemon: reconcile on a schedule and on triggers, serve health, metrics and status")
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--listen <host:port>", "address of the HTTP server (default: server.listen)")
    .option("--once", "one run, then exit (0 applied or nothing to do, 1 otherwise)")
    .option("--allow-mass-deactivation", `with --once: ${massDeactivationHelp}; a running daemon reads deactivationGuard.allowCommit instead`)
    .action(async (opts: RunFlags) => {
      const { runAction } = await import("./action.js");
      await runAction(opts, io);
    });
}
