/**
 * `gatesync ownership list|release|transfer` (docs/user/teams.md): the operator's view of the
 * ownership registry and its two explicit acts, each a row of the environment's history.
 */
import type { Command } from "commander";
import { InvalidArgumentError } from "commander";
import type { CliIo } from "../../common/cli-io.js";
import { envOptionHelpOne } from "../../common/cli-io.js";
import { examplesText } from "../../common/help-examples.js";
import type { OwnershipOptions } from "./action.js";

function formatOf(value: string): "text" | "json" {
  if (value !== "text" && value !== "json") throw new InvalidArgumentError("text or json");
  return value;
}

const interfaceHelp = "the object's interface: gateway, portal, dashboard or llm (its URL: the environment's target)";
const reasonHelp = 'why (the history row says it: "payments hands acme to billing")';

export function addOwnershipCommand(program: Command, io: CliIo): void {
  const ownership = program
    .command("ownership")
    .description("the ownership registry: which team owns each object on a target, and where it is managed (docs/user/teams.md); the operator's")
    .addHelpText("after", examplesText("ownership"));
  ownership
    .command("list")
    .description("every row of the registry beside this config's state: object, target, owner, environment, the resource that claimed it")
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--env <name>", envOptionHelpOne)
    .option("--format <format>", "text or json", formatOf, "text" as const)
    .addHelpText("after", examplesText("ownership list"))
    .action(async (opts: OwnershipOptions) => (await import("./action.js")).listAction(opts, io));
  ownership
    .command("release")
    .description("remove an object's owner: the next owner whose apply declares it claims it (recorded in the environment's history)")
    .argument("<object>", "the object as `gatesync ownership list` prints it (org-key:acme, api:ID …)")
    .requiredOption("--interface <name>", interfaceHelp)
    .requiredOption("--reason <text>", reasonHelp)
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--env <name>", envOptionHelpOne)
    .addHelpText("after", examplesText("ownership release"))
    .action(async (object: string, opts: OwnershipOptions) => (await import("./action.js")).releaseAction(object, opts, io));
  ownership
    .command("transfer")
    .description("give an object to another owner and environment: no call is made; the new owner's next apply manages it, the old one's refuses it")
    .argument("<object>", "the object as `gatesync ownership list` prints it")
    .requiredOption("--interface <name>", interfaceHelp)
    .requiredOption("--to <owner>", "the new owner")
    .requiredOption("--to-environment <name>", "the environment the new owner manages it from")
    .requiredOption("--reason <text>", reasonHelp)
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--env <name>", envOptionHelpOne)
    .addHelpText("after", examplesText("ownership transfer"))
    .action(async (object: string, opts: OwnershipOptions) => (await import("./action.js")).transferAction(object, opts, io));
}
