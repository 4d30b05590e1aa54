/**
 * `gatesync state move-to-env NAME`: the state a repository kept before it had `environments:`
 * (the top-level `state:`, as it was) becomes environment NAME's state — every record, the
 * lineage, the serial and the hash key, copied as `state migrate` copies them, under both
 * locks. The old state is left as it was (no environment reads it), to delete once the
 * environment's first plan is empty as it should be.
 */
import type { Command } from "commander";
import type { CliIo } from "../../../common/cli-io.js";
import { examplesText } from "../../../common/help-examples.js";

export function addMoveToEnv(state: Command, io: CliIo): void {
  state
    .command("move-to-env")
    .addHelpText("after", examplesText("state move-to-env"))
    .description("make the state of a config's single-environment days (its top-level `state:`) environment NAME's state")
    .argument("<name>", "the environment (of `environments:` in gatesync.yaml) that state was applied to")
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--force", "replace the environment's state when it is not empty")
    .action(async (name: string, opts: { config: string; force?: boolean }) => {
      const { moveToEnvAction } = await import("./action.js");
      await moveToEnvAction(name, opts, io);
    });
}
