/**
 * A state named on the command line: `sqlite:PATH`, `file:PATH` (the retired file format, read
 * only), `postgres` (the config's postgres state), or `postgres:VARIABLE[/schema]` (a connection
 * string held in an environment variable, so that no password appears in the command line).
 */
import type { GatesyncConfig } from "../../../config/config.js";
import { UsageError } from "../../../errors.js";
import { LegacyFileState } from "../../../record/legacy-file/legacy-file-state.js";
import { openStateBackend } from "../../../record/open-backend.js";
import { PostgresStateBackend } from "../../../record/postgres/postgres-backend.js";
import { SqliteStateBackend } from "../../../record/sqlite/sqlite-backend.js";
import type { StateBackend } from "../../../record/state.js";
import { connectionSecrets } from "../../../secrets/credentials.js";
import { registerSecret } from "../../../secrets/redaction.js";
import { stateSpecHelp } from "../../common/cli-io.js";

export function backendFromSpec(spec: string, config: GatesyncConfig | undefined, env: Readonly<Record<string, string | undefined>>): StateBackend {
  if (spec.startsWith("file:") && spec.length > 5) return new LegacyFileState(spec.slice(5));
  if (spec.startsWith("sqlite:") && spec.length > 7) return new SqliteStateBackend(spec.slice(7));
  if (spec === "postgres") {
    if (config?.state.backend !== "postgres")
      throw new UsageError(
        "`postgres` names the config's postgres state, but the config's state is not postgres",
        "use postgres:VARIABLE[/schema], with the connection string in VARIABLE",
      );
    return openStateBackend(config, env);
  }
  const m = /^postgres:([A-Za-z_][A-Za-z0-9_]*)(?:\/([a-z_][a-z0-9_]*))?$/.exec(spec);
  if (m !== null) {
    const url = env[m[1]!];
    if (url === undefined || url === "") throw new UsageError(`${m[1]} is not set`, "set it to the PostgreSQL connection string");
    // its password is scrubbed from every message, as the config's state.urlEnv is
    connectionSecrets(url).forEach((secret) => registerSecret(secret));
    return new PostgresStateBackend({ url, schema: m[2] ?? "gatesync" });
  }
  throw new UsageError(`unknown state ${JSON.stringify(spec)}`, `use ${stateSpecHelp}`);
}
