import type { Command } from "commander";
import type { CliIo } from "../../common/cli-io.js";
import { envOptionHelpOne } from "../../common/cli-io.js";
import { collect, massDeactivationHelp, selectionHelp } from "../../common/selection-options.js";
import type { ApplyFlags } from "./action.js";
import { examplesText } from "../../common/help-examples.js";

export function addApplyCommand(program: Command, io: CliIo): void {
  program
    .command("apply")
    .addHelpText("after", examplesText("apply"))
    .description("apply the changes (exit 0 all applied, 1 anything failed or in doubt, 3 blocked changes left)")
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--plan <file>", "apply a plan saved with `gatesync plan --out`; refused if the state or the files changed since")
    .option("--auto-approve", "apply without asking")
    .option("--dir <dir>", "apply the resources in this directory (a checkout) instead of the config's source")
    .option("--target <Kind/name>", selectionHelp.target, collect)
    .option("--exclude <Kind/name>", selectionHelp.exclude, collect)
    .option("--kind <Kind>", selectionHelp.kind, collect)
    .option("--selector <expr>", selectionHelp.selector)
    .option("--allow-mass-deactivation", massDeactivationHelp)
    .option("--env <name>", envOptionHelpOne)
    .option("--allow-empty-state", "apply from an empty state although the plan creates (the first apply of a repository); refused otherwise (STATE_EMPTY)")
    .option(
      "--allow-foreign-state",
      "apply with a state of another lineage than this working copy last applied the environment with (STATE_FOREIGN), and remember it",
    )
    .action(async (opts: ApplyFlags) => {
      const { applyAction } = await import("./action.js");
      await applyAction(opts, io);
    });
}
