import type { GatesyncConfig } from "../config/config.js";
import { ConfigError, ErrorCode } from "../errors.js";
import { FileStateBackend } from "./file-backend.js";
import { PostgresStateBackend } from "./postgres-backend.js";
import type { StateBackend } from "./state.js";
import { redactingState } from "../secrets/redacting-state.js";

/** The connection string of a postgres state, read from the variable the config names. */
export function postgresUrl(config: GatesyncConfig, env: Readonly<Record<string, string | undefined>>): string {
  if (config.state.backend !== "postgres") throw new ConfigError(ErrorCode.CONFIG_INVALID, "the state backend is not postgres");
  const url = env[config.state.urlEnv];
  if (url === undefined || url === "") {
    throw new ConfigError(ErrorCode.CONFIG_INVALID, `state.urlEnv names ${config.state.urlEnv}, which is not set`, { hint: "set it to the PostgreSQL connection string", location: { file: config.file, path: "state.urlEnv" } });
  }
  return url;
}

/** The state backend the config names; `longRunning` for the daemon (see FileBackendOptions). */
export function openStateBackend(config: GatesyncConfig, env: Readonly<Record<string, string | undefined>>, opts: { readonly longRunning?: boolean } = {}): StateBackend {
  // every record passes through the redaction layer on its way to the backend
  if (config.state.backend === "file") return redactingState(new FileStateBackend(config.state.path, { compactOnRelease: opts.longRunning !== true }));
  return redactingState(new PostgresStateBackend({ url: postgresUrl(config, env), schema: config.state.schema }));
}
