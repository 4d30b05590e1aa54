/**
 * The environments of a config (docs/user/environments.md) and each one's effective config:
 * its own settings over the top level's, its values, its overlay patches, and its own state.
 *
 * A config without `environments:` is one implicit environment, `default`, whose effective
 * config is the config itself, unchanged: everything that existed before environments works as
 * it did. Every consumer (one-shot commands, the daemon, a fleet of replicas) goes through
 * `environmentsOf`, so what an environment is has one definition.
 */
import path from "node:path";
import { ConfigError, ErrorCode } from "../errors.js";
import { similar } from "../text/similar.js";
import type { GatesyncConfig } from "./config.js";
import type { StateConfig } from "./config-sections.js";
import type { ValuesContext } from "../load/values.js";
import type { PatchOrigin } from "../load/patches.js";
import { namespacedState } from "./environment-section.js";
import type { EnvironmentDefinition, EnvironmentValue, PatchSource } from "./environment-section.js";

export { namespacedState } from "./environment-section.js";
export type { EnvironmentDefinition, EnvironmentValue, PatchSource } from "./environment-section.js";

/** The name of the one environment of a config without `environments:`. */
export const implicitEnvironmentName = "default";

export interface EnvironmentConfig {
  /** `staging`, `production` …; `default` for the implicit one. */
  readonly name: string;
  /** True for the one environment of a config without `environments:`. */
  readonly implicit: boolean;
  /** `${var:NAME}` values: its own over the top level's. */
  readonly values: Readonly<Record<string, EnvironmentValue>>;
  /** Overlay patches, in order. */
  readonly patches: readonly PatchSource[];
  /**
   * The config this environment runs with: targets, selector, schedule, secrets, notifications
   * and orphans its own where it sets them, the state its own (namespaced), `environment` set,
   * and no `environments`. The implicit environment's is the config itself.
   */
  readonly config: GatesyncConfig;
}

function effective(config: GatesyncConfig, env: EnvironmentDefinition): EnvironmentConfig {
  const values = { ...config.values, ...env.values };
  const { environments: _all, ...top } = config;
  const selector = env.selector ?? config.selector;
  const notifications = env.notifications ?? config.notifications;
  const effectiveConfig: GatesyncConfig = {
    ...top,
    environment: env.name,
    targets: { ...config.targets, ...env.targets },
    schedule: env.schedule ?? config.schedule,
    secrets: env.secrets ?? config.secrets,
    orphans: env.orphans ?? config.orphans,
    owner: env.owner ?? config.owner ?? env.name,
    source: env.source ?? config.source,
    state: env.state ?? namespacedState(config.state, env.name),
    values,
    patches: env.patches,
    promotion: env.promotion,
    ...(env.windows === undefined || env.windows.length === 0 ? {} : { windows: env.windows }),
    ...(selector === undefined ? {} : { selector }),
    ...(notifications === undefined ? {} : { notifications }),
    ...(env.track === undefined ? {} : { track: env.track }),
  };
  return { name: env.name, implicit: false, values, patches: env.patches, config: effectiveConfig };
}

/** Every environment of the config, in the file's order; a config without `environments:` has one, `default`. */
export function environmentsOf(config: GatesyncConfig): EnvironmentConfig[] {
  if (config.environments === undefined || config.environments.length === 0) {
    return [{ name: implicitEnvironmentName, implicit: true, values: config.values ?? {}, patches: [], config }];
  }
  const all = config.environments.map((env) => effective(config, env));
  // each knows the others: their credentials are never a secret this one's resources may read
  const fleet = all.map((e) => e.config);
  return all.map((e) => ({ ...e, config: { ...e.config, fleet } }));
}

/** The names `--env` accepts. */
export function environmentNames(config: GatesyncConfig): string[] {
  return environmentsOf(config).map((e) => e.name);
}

/**
 * The environment `--env NAME` names; an unknown name is a CONFIG_UNKNOWN_ENVIRONMENT error
 * that lists the known ones (and the nearest, for a typo).
 */
export function environmentNamed(config: GatesyncConfig, name: string): EnvironmentConfig {
  const all = environmentsOf(config);
  const found = all.find((e) => e.name === name);
  if (found !== undefined) return found;
  const known = all.map((e) => e.name);
  const near = known.filter((k) => similar(k, name));
  const where = config.file === undefined ? "the configuration" : path.basename(config.file);
  throw new ConfigError(ErrorCode.CONFIG_UNKNOWN_ENVIRONMENT, `unknown environment ${JSON.stringify(name)}: ${where} has ${known.join(", ")}`, {
    hint: near.length > 0 ? `did you mean --env ${near[0]}?` : `pass one of: ${known.map((k) => `--env ${k}`).join(", ")}`,
    ...(config.file === undefined ? {} : { location: { file: config.file, path: "environments" } }),
  });
}

/** `--env NAME` as given (one environment), or every environment when it is absent. */
export function selectEnvironments(config: GatesyncConfig, name: string | undefined): EnvironmentConfig[] {
  return name === undefined ? environmentsOf(config) : [environmentNamed(config, name)];
}

/** Who an (effective) config's runs claim for (docs/user/teams.md): its owner (default: the environment's name) and its environment. */
export function claimantOf(config: GatesyncConfig): { readonly owner: string; readonly environment: string } {
  const environment = config.environment ?? implicitEnvironmentName;
  return { owner: config.owner ?? environment, environment };
}

/** A description of a state for messages: the file or the PostgreSQL schema. */
export function describeState(state: StateConfig): string {
  return state.backend === "postgres" ? `postgres schema ${state.schema}` : state.path;
}

/**
 * What validation puts in for `${var:}` with this (effective) config: its environment's name
 * (`default` for a config without environments) and values.
 */
export function valuesContextOf(config: GatesyncConfig): ValuesContext {
  return { environment: config.environment ?? implicitEnvironmentName, values: config.values ?? {} };
}

const valuesFileOf = (config: GatesyncConfig): string | undefined => config.teamFile ?? config.file;

/** The validate options that carry the values and overlay patches of an (effective) config. */
export function valuesOptionsOf(config: GatesyncConfig): {
  readonly values: ValuesContext;
  readonly valuesFile?: string;
  readonly patches?: readonly PatchOrigin[];
} {
  return {
    values: valuesContextOf(config),
    // a daemon run's values are the commit's: named in the repository's file
    ...(valuesFileOf(config) === undefined ? {} : { valuesFile: valuesFileOf(config)! }),
    ...(config.patches === undefined || config.patches.length === 0 ? {} : { patches: config.patches }),
  };
}

/**
 * The batch route gatesync.yaml reserves for the operator, when it batches gateway calls: the
 * loopback API's listen path and id, and the setting naming them (kinds/batch-route.ts reads it).
 */
export function batchRouteOf(config: GatesyncConfig): {
  readonly batchRoute?: { readonly listenPath: string; readonly apiId?: string; readonly setting: string };
} {
  const batch = config.targets.gateway?.batch;
  if (batch === undefined) return {};
  return { batchRoute: { listenPath: batch.listenPath, ...(batch.apiId === undefined ? {} : { apiId: batch.apiId }), setting: "targets.gateway.batch" } };
}
