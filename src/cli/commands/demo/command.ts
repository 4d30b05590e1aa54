/**
 * `npm start`: the main job on its embedded default. Starts a sandbox in this process with the
 * example fixtures and runs gatesync on examples/config with examples/gatesync.yaml, its
 * targets pointed at the sandbox and its state in a throw-away directory (the sandbox starts
 * empty every time).
 */
import type { Command } from "commander";
import type { CliIo } from "../../common/cli-io.js";
import type { DemoFlags } from "./action.js";
import { examplesText } from "../../common/help-examples.js";

export function addDemoCommand(program: Command, io: CliIo): void {
  program
    .command("demo")
    .addHelpText("after", examplesText("demo"))
    .description("run the daemon on examples/ against an in-process sandbox (what `npm start` runs)")
    .option("--once", "stop everything after the first run")
    .option("--serve", "after the first run, stop the daemon and keep the sandbox up for exploring")
    .option("--listen <host:port>", "address of the status server", "127.0.0.1:9464")
    .action(async (opts: DemoFlags) => {
      const { demoAction } = await import("./action.js");
      await demoAction(opts, io);
    });
}
