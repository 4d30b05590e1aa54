/**
 * `--env NAME` (docs/user/environments.md): which environment of gatesync.yaml a command works
 * on. `plan` and `validate` without it cover every environment; a command that writes (apply,
 * state) works on one, so with several environments it needs the flag.
 */
import { existsSync } from "node:fs";
import { loadConfig } from "../../config/config.js";
import type { GatesyncConfig } from "../../config/config.js";
import { environmentNamed, environmentNames, environmentsOf, selectEnvironments } from "../../config/environments.js";
import type { EnvironmentConfig } from "../../config/environments.js";
import { UsageError } from "../../errors.js";
import { commandFor, printedCommand } from "../../printed-commands.js";

/** The environments `--env` names: one, or all of them when it is absent. */
export function environmentsForFlag(config: GatesyncConfig, env: string | undefined): EnvironmentConfig[] {
  return selectEnvironments(config, env);
}

/** The one environment a writing command works on: `--env NAME`, or the only one there is. */
export function oneEnvironment(config: GatesyncConfig, env: string | undefined, command: string): EnvironmentConfig {
  if (env !== undefined) return environmentNamed(config, env);
  const all = environmentsOf(config);
  if (all.length === 1) return all[0]!;
  const names = environmentNames(config);
  throw new UsageError(`gatesync.yaml has ${names.length} environments (${names.join(", ")}): ${command} works on one at a time`, {
    hint: `pass --env, e.g. \`${commandFor(printedCommand(...command.split(" ")), { env: names[0]! })}\``,
  });
}

/** The config `-c` names, and the one environment of it a state command works on. */
export async function environmentConfig(file: string | undefined, env: string | undefined, command: string): Promise<GatesyncConfig> {
  return oneEnvironment(await loadConfig(file ?? "gatesync.yaml"), env, command).config;
}

/**
 * When a config gained `environments:` beside a state of its single-environment days that no
 * environment has taken yet: the command that moves it (said by plan and apply, whose
 * environment would otherwise plan everything as new).
 */
export function unmovedStateHint(top: GatesyncConfig, environment: EnvironmentConfig): string | undefined {
  if (environment.implicit || top.state.backend !== "sqlite" || environment.config.state.backend !== "sqlite") return undefined;
  if (!existsSync(top.state.path) || existsSync(environment.config.state.path)) return undefined;
  const move = commandFor(printedCommand("state", "move-to-env", environment.name), top.file === undefined ? {} : { config: top.file });
  return `the state of this repository's single-environment days (${top.state.path}) belongs to no environment yet, and environment ${environment.name}'s state (${environment.config.state.path}) does not exist: if ${environment.name} is where that state was applied, move it first with \`${move}\``;
}
