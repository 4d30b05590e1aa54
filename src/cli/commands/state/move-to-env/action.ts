/** The action of `gatesync state move-to-env NAME` (state-move-to-env.ts declares it). */
import { loadConfig } from "../../../../config/config.js";
import type { GatesyncConfig } from "../../../../config/config.js";
import { claimantOf, describeState, environmentNamed } from "../../../../config/environments.js";
import { UsageError } from "../../../../errors.js";
import { openStateBackend } from "../../../../record/open-backend.js";
import { openOwnership } from "../../../../record/ownership/open-ownership.js";
import type { StateBackend } from "../../../../record/state.js";
import type { OwnershipRecord } from "../../../../record/history/ownership-history.js";
import { ownershipTargets } from "../../../../run/ownership-stages.js";
import type { CliIo } from "../../../common/cli-io.js";
import { migrateState } from "../migrate.js";
import { commandFor, printedCommand } from "../../../../printed-commands.js";

/**
 * The single-environment days' claims in the ownership registry (docs/user/teams.md), handed to
 * the environment with its records, each an `ownership` row of its history: otherwise its first
 * plan would find its own objects another claimant's.
 */
async function moveClaims(top: GatesyncConfig, environment: GatesyncConfig, to: StateBackend, io: CliIo): Promise<number> {
  const registry = openOwnership(environment, io.env);
  const [was, now] = [claimantOf(top), claimantOf(environment)];
  try {
    const targets = Object.entries(ownershipTargets(environment)).map(([i, url]) => ({ interface: i, url }));
    const rows = (await registry.rowsOf(targets)).filter((r) => r.owner === was.owner && r.environment === was.environment);
    for (const r of rows) {
      const at = new Date().toISOString();
      await registry.transfer(r, now, at);
      const record = {
        kind: "ownership" as const,
        startedAt: at,
        finishedAt: at,
        act: "transfer" as const,
        interface: r.interface,
        url: r.url,
        object: r.object,
      };
      const row: OwnershipRecord = { ...record, from: was, to: now, reason: "gatesync state move-to-env" };
      await to.appendHistory({ record: row }, environment.history);
    }
    return rows.length;
  } finally {
    await registry.close();
  }
}

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
    const claims = await moveClaims(config, environment.config, to, io);
    if (claims > 0) io.stdout(`${claims} objects of the ownership registry are now environment ${name}'s\n`);
    io.stdout(
      `${describeState(environment.config.state)} is now environment ${name}'s state; ${describeState(config.state)} is left as it was and no environment reads it: delete it once \`${commandFor(printedCommand("plan"), { env: name })}\` shows what you expect\n`,
    );
  } finally {
    await from.close();
    await to.close();
  }
}
