import { Option } from "commander";
import type { Command } from "commander";
import { stateTokenVariable } from "../../../secrets/credentials.js";
import type { CliIo } from "../../common/cli-io.js";
import { envOptionHelp, stateSpecHelp, stateUrlVariable } from "../../common/cli-io.js";
import { collect, massDeactivationHelp, selectionHelp } from "../../common/selection-options.js";
import { examplesText } from "../../common/help-examples.js";
import type { PlanFlags } from "./one-environment.js";

export function addPlanCommand(program: Command, io: CliIo): void {
  program
    .command("plan")
    .addHelpText("after", examplesText("plan"))
    .description(
      "show what an apply would change (exit 0; with --detailed-exitcode: 0 no changes, 2 changes, 3 blocked changes present, 1 error; with --fail-on-breaking: 4 breaking changes)",
    )
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .addOption(new Option("--format <format>", "text, markdown (merge requests) or json").choices(["text", "markdown", "json"]).default("text"))
    .option("--out <file>", "also save the plan as JSON, for `gatesync apply --plan FILE`")
    .option("--detailed-exitcode", "exit 2 when there are changes to apply, 3 when some change is blocked (cannot be applied)")
    .option("--fail-on-breaking", "exit 4 when a planned change breaks an API's callers or takes access away (the plan is still written)")
    .option("--dir <dir>", "plan the resources in this directory (a checkout) instead of the config's source")
    .option("--state-url <url>", `plan against a running daemon's state (its GET /state, with the token in ${stateTokenVariable}); default ${stateUrlVariable}`)
    .option("--state <spec>", `plan against this state instead of the config's: ${stateSpecHelp} (a read-only role is enough)`)
    .option("--allow-empty-state", "plan even when the state is empty (never written), in CI too")
    .option("--require-state", "refuse to plan against an empty state (the default when CI is set)")
    .option("--target <Kind/name>", selectionHelp.target, collect)
    .option("--exclude <Kind/name>", selectionHelp.exclude, collect)
    .option("--kind <Kind>", selectionHelp.kind, collect)
    .option("--selector <expr>", selectionHelp.selector)
    .option("--allow-mass-deactivation", massDeactivationHelp)
    .option("--env <name>", envOptionHelp)
    .action(async (opts: PlanFlags) => {
      const { planAction } = await import("./action.js");
      await planAction(opts, io);
    });
}
