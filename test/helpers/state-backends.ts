import path from "node:path";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import type { StateBackend } from "../../src/record/state.js";
import { postgresBackend, testSchema } from "./postgres.js";
import { tempRepo } from "./temp-repo.js";

/**
 * Both state backends, for `describe.each`: each entry's name and a function that makes one
 * fresh state (a SQLite file in a temp dir, or a PostgreSQL schema) and answers with an opener
 * of handles on it — two handles of one state are two replicas sharing it.
 */
export const stateBackends: Array<[string, () => Promise<() => StateBackend>]> = [
  [
    "sqlite",
    async () => {
      const file = path.join(await tempRepo(), ".gatesync", "state.db");
      return () => new SqliteStateBackend(file);
    },
  ],
  [
    "postgres",
    () => {
      const schema = testSchema();
      return Promise.resolve(() => postgresBackend(schema));
    },
  ],
];
