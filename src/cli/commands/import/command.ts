import { Option } from "commander";
import type { Command } from "commander";
import type { CliIo } from "../../common/cli-io.js";
import { examplesText } from "../../common/help-examples.js";

import type { ImportFlags } from "./import-flags.js";

const collect = (value: string, previous: string[]): string[] => [...previous, value];

export function addImportCommand(program: Command, io: CliIo): void {
  program
    .command("import")
    .addHelpText("after", examplesText("import"))
    .description("write a repository from what a gateway already holds, so that the first plan creates nothing (exit 0 imported, 1 with errors)")
    .argument("<dir>", "the repository to write (new, or existing with --merge)")
    .option("--sync-dump <dir>", "a dump directory of the vendor's sync tool (repeatable)", collect, [])
    .option("--operator <file>", "the operator's manifests: OAS API resources and their ConfigMaps (repeatable)", collect, [])
    .option("--dashboard-export <file>", "a dashboard OAS export, JSON or YAML (repeatable)", collect, [])
    .option("--answers <dir>", "the services' list and read answers, saved as docs/user/import.md says (repeatable)", collect, [])
    .option("--product-provider <id>", "the identity provider of the portal's products (their answers carry none)")
    .option("--merge", "write into an existing repository, touching only the files it imports", false)
    .option("--encrypt-to <recipient>", "an age recipient: secrets go to a SOPS file of the environment instead of ${env:} (repeatable)", collect, [])
    .option("--environment <name>", "the environment whose SOPS file holds the secrets (secrets/NAME/imported.enc.yaml)", "default")
    .option("--max-file-bytes <n>", "the largest source file read (default 16 MiB)")
    .addOption(new Option("--format <format>", "report format").choices(["text", "json"]).default("text"))
    .action(async (dir: string, flags: ImportFlags) => {
      const { importAction } = await import("./action.js");
      await importAction(dir, flags, io);
    });
}
