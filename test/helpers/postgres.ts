import { randomBytes } from "node:crypto";
import pg from "pg";
import { PostgresStateBackend } from "../../src/record/postgres/postgres-backend.js";
import { PostgresOwnership, ownershipSchema } from "../../src/record/ownership/postgres-ownership.js";
import { registryUrl } from "../../src/record/ownership/ownership.js";
import { testPostgresUrl } from "./postgres-probe.js";
import { onSandboxAddresses } from "./sandbox.js";

/** The PostgreSQL of this machine (`.ci/run` checks it is up). */
export const pgUrl = testPostgresUrl;

const schemas: string[] = [];

/** PostgreSQL's codes for a schema or table not there yet: no daemon of this run has claimed anything. */
const notCreated = new Set(["3F000", "42P01"]);

// the ownership registry outlives the sandboxes whose addresses key it (helpers/sandbox.ts)
onSandboxAddresses(async (urls) => {
  await sql(`DELETE FROM ${ownershipSchema}.owners WHERE url = ANY($1)`, [urls.map(registryUrl)]).catch((err: unknown) => {
    if (!notCreated.has((err as { code?: string }).code ?? "")) throw err;
  });
});

/** A fresh schema name, dropped by dropTestSchemas(). */
export function testSchema(): string {
  const s = `gs_test_${randomBytes(5).toString("hex")}`;
  schemas.push(s);
  return s;
}

export function postgresBackend(schema = testSchema()): PostgresStateBackend {
  return new PostgresStateBackend({ url: pgUrl, schema });
}

export async function sql<T extends pg.QueryResultRow = pg.QueryResultRow>(text: string, values: unknown[] = []): Promise<T[]> {
  const client = new pg.Client({ connectionString: pgUrl });
  await client.connect();
  try {
    return (await client.query<T>(text, values)).rows;
  } finally {
    await client.end();
  }
}

export async function dropTestSchemas(): Promise<void> {
  for (const s of schemas.splice(0)) await sql(`DROP SCHEMA IF EXISTS ${pg.escapeIdentifier(s)} CASCADE`);
}

/**
 * Lets `role` (a test's own login) use the ownership registry: prepared first by the tests'
 * superuser, then the grants every daemon's role needs on it (docs/user/teams.md).
 */
export async function grantOwnershipRegistry(role: string): Promise<void> {
  const registry = new PostgresOwnership(postgresBackend(ownershipSchema));
  try {
    await registry.rowsOf([]);
  } finally {
    await registry.close();
  }
  await sql(`GRANT USAGE, CREATE ON SCHEMA ${ownershipSchema} TO ${role}`);
  await sql(`GRANT SELECT, INSERT, UPDATE, DELETE ON ${ownershipSchema}.owners TO ${role}`);
}

/** The tests' PostgreSQL URL, logged in as `user` (a test's own role). */
export function urlAs(user: string): string {
  const u = new URL(pgUrl);
  u.username = user;
  u.password = "";
  return u.toString();
}

/** A test's own role gone: its sessions ended, what it owns dropped. */
export async function dropTestRole(role: string): Promise<void> {
  await sql(`SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE usename = $1`, [role]).catch(() => undefined);
  await sql(`DROP OWNED BY ${role}`).catch(() => undefined);
  await sql(`DROP ROLE IF EXISTS ${role}`).catch(() => undefined);
}
