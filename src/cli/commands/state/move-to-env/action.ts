/** The action of `gatesync state move-to-env NAME` (state-move-to-env.ts declares it). */
import { loadConfig } from "../../../../config/config.js";
import { describeState, environmentNamed } from "../../../../config/environments.js";
import { UsageError } from "../../../../errors.js";
import { openStateBackend } from "../../../../record/open-backend.js";
import type { CliIo } from "../../../common/cli-io.js";
import { migrateState } from "../migrate.js";
import { commandFor, printedCommand } from "../../../../printed-commands.js";

/** Copies the top-level state into environment `name`'s, under both locks. */
export async function moveToEnvAction(name: string, opts: { config: string; force?: boolean }, io: CliIo): Promise<void> {
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
      `${describeState(environment.config.state)} is now environment ${name}'s state; ${describeState(config.state)} is left as it was and no environment reads it: delete it once \`${commandFor(printedCommand("plan"), { env: name })}\` shows what you expect\n`,
    );
  } finally {
    await from.close();
    await to.close();
  }
}
