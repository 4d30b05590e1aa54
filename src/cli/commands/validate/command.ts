import { Option } from "commander";
import type { Command } from "commander";
import type { CliIo } from "../../common/cli-io.js";
import { envOptionHelp } from "../../common/cli-io.js";
import type { ReportFormat } from "../../common/report.js";
import { examplesText } from "../../common/help-examples.js";

export function addValidateCommand(program: Command, io: CliIo): void {
  program
    .command("validate")
    .addHelpText("after", examplesText("validate"))
    .description("validate a directory of resources (exit 0 valid, 1 invalid)")
    .argument("[dir]", "resource directory (default: the config's source; a git source is fetched as `plan` fetches it)")
    .option("-c, --config <file>", "gatesync.yaml (default: ./gatesync.yaml when present)")
    .addOption(
      new Option("--format <format>", "output format: text, json, github (workflow annotations), gitlab (Code Quality JSON)")
        .choices(["text", "json", "github", "gitlab"])
        .default("text"),
    )
    .option("--env <name>", envOptionHelp)
    .option(
      "--state-url <url>",
      "the daemon's address (or GATESYNC_STATE_URL): its ownership registry is read with GATESYNC_STATE_TOKEN, as `plan --state-url` reads its state",
    )
    .option("--only <files...>", "report only the findings in these files (the whole directory is still checked): the pre-commit hook's staged files")
    .action(async (dir: string | undefined, opts: { config?: string; format: ReportFormat; env?: string; only?: string[]; stateUrl?: string }) => {
      const { validateAction } = await import("./action.js");
      await validateAction(dir, opts, io);
    });
}
