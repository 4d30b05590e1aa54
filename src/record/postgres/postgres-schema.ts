/**
 * The tables of a PostgreSQL state and their versioned migrations (as SQLite's): created and
 * migrated at start, each applied once, in order, under a transaction-scoped advisory lock so
 * that concurrent starts do not race, and recorded in `schema_migrations`. A state already at
 * the current version needs no DDL: read-only users can plan. The tables are documented in
 * docs/user/state.md.
 */
import type pg from "pg";
import { ErrorCode, StateError } from "../../errors.js";
import { stateFormatVersion } from "../state.js";

/**
 * Advisory lock keys: (hashtext(schema), n). `ddl`: held, for its transaction, by whatever
 * creates a gatesync schema or its tables (createSchema).
 */
export const lockKeys = { ddl: 0, state: 1 } as const;

/**
 * Creates `schema` (`s`: its escaped identifier) in the caller's transaction, which then holds
 * the schema's one DDL lock to its end: the state's migrations and the fleet's lease tables
 * (replicas starting together run both at once) take turns. PostgreSQL's `IF NOT EXISTS` alone
 * is not safe against a concurrent creator: one of them fails on pg_namespace's unique index.
 */
export async function createSchema(client: pg.ClientBase, schema: string, s: string): Promise<void> {
  await client.query("SELECT pg_advisory_xact_lock(hashtext($1), $2)", [schema, lockKeys.ddl]);
  // asked of pg_namespace with this statement's snapshot: a schema another creator committed while
  // this one waited for the lock is seen (CREATE SCHEMA IF NOT EXISTS alone looks it up in a
  // catalog cache the advisory lock does not refresh, and failed on the unique index)
  const exists = (await client.query("SELECT 1 FROM pg_namespace WHERE nspname = $1", [schema])).rowCount === 1;
  if (!exists) await client.query(`CREATE SCHEMA IF NOT EXISTS ${s}`);
}

const migrations: ReadonlyArray<{ version: number; sql: (s: string) => string }> = [
  {
    version: 1,
    sql: (s) => `
      CREATE TABLE IF NOT EXISTS ${s}.meta (
        id int PRIMARY KEY DEFAULT 1 CHECK (id = 1),
        format_version int NOT NULL,
        lineage text NOT NULL DEFAULT '',
        serial bigint NOT NULL DEFAULT 0,
        hash_key text,
        lock_owner text,
        lock_since timestamptz
      );
      INSERT INTO ${s}.meta (id, format_version) VALUES (1, ${stateFormatVersion}) ON CONFLICT (id) DO NOTHING;
      CREATE TABLE IF NOT EXISTS ${s}.resources (
        id text PRIMARY KEY,
        kind text NOT NULL,
        record jsonb NOT NULL,
        serial bigint NOT NULL,
        updated_at timestamptz NOT NULL DEFAULT now()
      );`,
  },
  {
    // the environment's history (history.ts): rows never touch the records or the serial
    version: 2,
    sql: (s) => `
      CREATE TABLE IF NOT EXISTS ${s}.history (
        seq bigserial PRIMARY KEY,
        kind text NOT NULL,
        started_at timestamptz NOT NULL,
        last_at timestamptz NOT NULL,
        repeats int NOT NULL DEFAULT 0,
        fold_key text,
        record jsonb NOT NULL
      );
      CREATE INDEX IF NOT EXISTS history_by_kind ON ${s}.history (kind, seq);`,
  },
];

export const latestMigration = migrations[migrations.length - 1]!.version;

/** Runs `work` on a connection of its own (the shared pool's, in its user's turn). */
export type OnConnection = <T>(work: (client: pg.PoolClient) => Promise<T>) => Promise<T>;

/** Brings the tables of `schema` (`s`: the escaped identifier) to the latest version; refuses tables a newer gatesync made. */
export async function migratePostgres(on: OnConnection, schema: string, s: string): Promise<void> {
  const current = await on((c) => c.query<{ v: number | null }>(`SELECT max(version) AS v FROM ${s}.schema_migrations`)).then(
    (r) => r.rows[0]?.v ?? 0,
    () => -1,
  );
  if (current === latestMigration) return;
  if (current > latestMigration) {
    throw new StateError(
      ErrorCode.STATE_VERSION,
      `the state tables in schema ${schema} are at version ${current}; this gatesync knows up to ${latestMigration}`,
      {
        hint: "use the newer gatesync that migrated them",
      },
    );
  }
  await on(async (client) => {
    await client.query("BEGIN");
    try {
      await createSchema(client, schema, s);
      await client.query(`CREATE TABLE IF NOT EXISTS ${s}.schema_migrations (version int PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())`);
      const applied = new Set((await client.query<{ version: number }>(`SELECT version FROM ${s}.schema_migrations`)).rows.map((r) => r.version));
      for (const m of migrations) {
        if (applied.has(m.version)) continue;
        await client.query(m.sql(s));
        await client.query(`INSERT INTO ${s}.schema_migrations (version) VALUES ($1)`, [m.version]);
      }
      await client.query("COMMIT");
    } catch (err) {
      await client.query("ROLLBACK").catch(() => undefined);
      throw err;
    }
  });
}
