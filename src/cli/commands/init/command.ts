import path from "node:path";
import type { Command } from "commander";
import { examplesText } from "../../common/help-examples.js";

export function addInitCommand(program: Command, io: { stdout: (t: string) => void }): void {
  program
    .command("init")
    .addHelpText("after", examplesText("init"))
    .description("scaffold a repository: gatesync.yaml, one example resource per kind, sandbox fixtures, the CI job")
    .argument("[dir]", "directory to scaffold", ".")
    .option("--force", "overwrite existing files", false)
    .action(async (dir: string, flags: { force: boolean }) => {
      const { initRepository } = await import("../../../init/init.js");
      const written = await initRepository(dir, flags.force);
      const root = path.resolve(dir);
      io.stdout(
        [
          `scaffolded ${root}:`,
          ...written.map((f) => `  ${path.relative(root, f)}`),
          "next: gatesync validate, then gatesync sandbox --fixtures sandbox-fixtures.yaml, gatesync plan, and the first apply: gatesync apply --allow-empty-state (its state is new)",
          "",
        ].join("\n"),
      );
    });
}
