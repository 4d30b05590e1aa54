import { existsSync } from "node:fs";
import path from "node:path";
import type { GatesyncConfig } from "../config/config.js";
import { ConfigError, ErrorCode, StateError } from "../errors.js";
import type { PoolSettings } from "./postgres/shared-pool.js";
import { PostgresStateBackend } from "./postgres/postgres-backend.js";
import { SqliteStateBackend } from "./sqlite/sqlite-backend.js";
import { migrateCommand } from "./sqlite/sqlite-open.js";
import type { StateBackend } from "./state.js";
import { redactingState } from "./wrappers/redacting-state.js";

/** The connection string of a postgres state, read from the variable the config names. */
export function postgresUrl(config: GatesyncConfig, env: Readonly<Record<string, string | undefined>>): string {
  if (config.state.backend !== "postgres") throw new ConfigError(ErrorCode.CONFIG_INVALID, "the state backend is not postgres");
  const url = env[config.state.urlEnv];
  if (url === undefined || url === "") {
    throw new ConfigError(ErrorCode.CONFIG_INVALID, `state.urlEnv names ${config.state.urlEnv}, which is not set`, {
      hint: "set it to the PostgreSQL connection string",
      location: { file: config.file, path: "state.urlEnv" },
    });
  }
  return url;
}

/**
 * An old file state where the SQLite database would be: `state.json` beside a database that does
 * not exist yet. Never start an empty state beside it (every created resource would be created
 * again): say the command that moves it, and stop.
 */
export function refuseOldStateBeside(dbFile: string): void {
  if (existsSync(dbFile)) return;
  const candidates = [path.join(path.dirname(dbFile), "state.json"), ...(dbFile.endsWith(".db") ? [`${dbFile.slice(0, -3)}.json`] : [])];
  const old = candidates.find((f) => existsSync(f) || existsSync(`${f}.journal`) || existsSync(`${f}.bak`));
  if (old === undefined) return;
  throw new StateError(ErrorCode.STATE_OLD_FORMAT, `an old gatesync state (${old}) lies where the state database ${dbFile} would be`, {
    hint: `move it over first: \`${migrateCommand(old, dbFile)}\` (nothing was started beside it)`,
    location: { file: old },
  });
}

/**
 * The state backend the config names (`applicationName`: a fleet replica's PostgreSQL sessions;
 * `user`: who waits for a connection of the shared pool, in its STATE_POOL_TIMEOUT).
 */
export function openStateBackend(
  config: GatesyncConfig,
  env: Readonly<Record<string, string | undefined>>,
  options: { readonly applicationName?: string; readonly user?: string } = {},
): StateBackend {
  if (config.state.backend === "sqlite") {
    refuseOldStateBeside(config.state.path);
    // every record passes through the redaction layer on its way to the backend
    const stale = config.state.lockStaleMs;
    // the heartbeat refreshes the lock six times per stale time (every 10 s for the default minute)
    return redactingState(
      new SqliteStateBackend(config.state.path, stale === undefined ? {} : { staleMs: stale, refreshMs: Math.max(50, Math.round(stale / 6)) }),
    );
  }
  return redactingState(new PostgresStateBackend({ ...postgresConnection(config, env), schema: config.state.schema, ...options }));
}

/**
 * The database and pool settings of a PostgreSQL state: every backend of the process on that
 * database (the state, the ownership registry) asks for the shared pool with these, so the first
 * to open it does not decide its size alone.
 */
export function postgresConnection(
  config: GatesyncConfig,
  env: Readonly<Record<string, string | undefined>>,
): { readonly url: string; readonly pool?: PoolSettings } {
  const url = postgresUrl(config, env);
  return config.state.backend === "postgres" && config.state.pool !== undefined ? { url, pool: config.state.pool } : { url };
}
