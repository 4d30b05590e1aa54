/** `gatesync history`: an environment's runs as its state keeps them (record/history.ts), newest first. */
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import type { CliIo } from "../../common/cli-io.js";
import { envOptionHelpOne } from "../../common/cli-io.js";
import { examplesText } from "../../common/help-examples.js";
import type { HistoryOptions } from "./action.js";

/** `--limit N`: a whole number from 1 up. */
function limitOf(value: string): number {
  const n = Number(value);
  if (!Number.isInteger(n) || n < 1) throw new InvalidArgumentError("give a whole number from 1 up");
  return n;
}

function formatOf(value: string): "text" | "json" {
  if (value !== "text" && value !== "json") throw new InvalidArgumentError("text or json");
  return value;
}

export function addHistoryCommand(program: Command, io: CliIo): void {
  program
    .command("history")
    .addHelpText("after", examplesText("history"))
    .description(
      "the environment's runs, newest first, as its state keeps them (`history:` in gatesync.yaml bounds them): who wrote each commit, what the run did, which replica ran it",
    )
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--env <name>", envOptionHelpOne)
    .option("--format <format>", "text or json", formatOf, "text" as const)
    .option("--limit <n>", "the newest N runs", limitOf, 20)
    .action(async (opts: HistoryOptions) => (await import("./action.js")).historyAction(opts, io));
}
