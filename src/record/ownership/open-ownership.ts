/**
 * The ownership registry an (effective) config's state goes with: SQLite's `ownership.db` in the
 * state file's directory, or PostgreSQL's `gatesync_ownership` schema of the state's database.
 */
import type { GatesyncConfig } from "../../config/config.js";
import { postgresConnection } from "../open-backend.js";
import { PostgresStateBackend } from "../postgres/postgres-backend.js";
import type { OwnershipRegistry } from "./ownership.js";
import { PostgresOwnership, ownershipSchema } from "./postgres-ownership.js";
import { SqliteOwnership, ownershipFileBeside } from "./sqlite-ownership.js";

export function openOwnership(
  config: GatesyncConfig,
  env: Readonly<Record<string, string | undefined>>,
  options: { readonly applicationName?: string } = {},
): OwnershipRegistry {
  if (config.state.backend === "sqlite") return new SqliteOwnership(ownershipFileBeside(config.state.path));
  return new PostgresOwnership(new PostgresStateBackend({ ...postgresConnection(config, env), schema: ownershipSchema, ...options }));
}
