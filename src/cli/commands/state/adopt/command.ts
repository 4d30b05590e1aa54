/** `gatesync state adopt Kind/name --id ID`: record an object made by hand, so the next apply does not create it again. */
import type { Command } from "commander";
import { adoptAnnotation } from "../../../../plan/names/adopt-annotation.js";
import type { CliIo } from "../../../common/cli-io.js";
import { envOptionHelpOne } from "../../../common/cli-io.js";
import { examplesText } from "../../../common/help-examples.js";

export function addStateAdoptCommand(state: Command, io: CliIo): void {
  state
    .command("adopt")
    .addHelpText("after", examplesText("state adopt"))
    .description(
      `record an object that already exists on the server (made by hand) under its id, so the next apply does not create it again (or annotate the resource with ${adoptAnnotation})`,
    )
    .argument("<resource>", "Kind/name")
    .requiredOption("--id <id>", "the object's id on the server")
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--env <name>", envOptionHelpOne)
    .action(async (id: string, opts: { id: string; config: string; env?: string }) => {
      const { adoptAction } = await import("./action.js");
      await adoptAction(id, opts, io);
    });
}
