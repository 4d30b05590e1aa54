/**
 * `gatesync state move-to-env NAME`: the state a repository kept before it had `environments:`
 * (the top-level `state:`, as it was) becomes environment NAME's state — every record, the
 * lineage, the serial and the hash key, copied as `state migrate` copies them, under both
 * locks. The old state is left as it was (no environment reads it), to delete once the
 * environment's first plan is empty as it should be.
 */
import type { Command } from "commander";
import { loadConfig } from "../config/config.js";
import { describeState, environmentNamed } from "../config/environments.js";
import { UsageError } from "../errors.js";
import { openStateBackend } from "../record/open-backend.js";
import type { CliIo } from "./plan-command.js";
import { migrateState } from "./state-migrate.js";

export function addMoveToEnv(state: Command, io: CliIo): void {
  state
    .command("move-to-env")
    .description("make the state of a config's single-environment days (its top-level `state:`) environment NAME's state")
    .argument("<name>", "the environment (of `environments:` in gatesync.yaml) that state was applied to")
    .option("-c, --config <file>", "gatesync.yaml", "gatesync.yaml")
    .option("--force", "replace the environment's state when it is not empty")
    .action(async (name: string, opts: { config: string; force?: boolean }) => {
      const config = await loadConfig(opts.config);
      if (config.environments === undefined) {
        throw new UsageError(`${opts.config} has no \`environments:\`: its state is already the one environment's`, {
          hint: "add `environments:` (docs/user/environments.md), then run this command again",
        });
      }
      const environment = environmentNamed(config, name);
      const from = openStateBackend(config, io.env);
      const to = openStateBackend(environment.config, io.env);
      try {
        await migrateState(from, to, opts.force === true, io);
        io.stdout(
          `${describeState(environment.config.state)} is now environment ${name}'s state; ${describeState(config.state)} is left as it was and no environment reads it: delete it once \`gatesync plan --env ${name}\` shows what you expect\n`,
        );
      } finally {
        await from.close();
        await to.close();
      }
    });
}
