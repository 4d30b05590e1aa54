/**
 * Replicas starting together on a fresh PostgreSQL schema: each creates the fleet's lease
 * tables and migrates its state into the same schema at once. PostgreSQL's `CREATE SCHEMA IF
 * NOT EXISTS` is not safe against a concurrent creator (a unique violation on pg_namespace);
 * before every creator took one lock for it, a replica could start with its lease connection
 * down and refuse the triggers it was sent.
 */
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import { LeaseTable } from "../../src/fleet/lease-table.js";
import { migratePostgres } from "../../src/record/postgres/postgres-schema.js";
import { dropTestSchemas, pgUrl, testSchema } from "../helpers/postgres.js";

afterAll(dropTestSchemas);

describe("a schema created by several replicas at once", () => {
  it("is created once: neither the lease tables' nor the state's creator fails, in any of 20 races", async () => {
    const pool = new pg.Pool({ connectionString: pgUrl, max: 8 });
    const failures: string[] = [];
    const on = async <T>(work: (c: pg.PoolClient) => Promise<T>): Promise<T> => {
      const c = await pool.connect();
      try {
        return await work(c);
      } finally {
        c.release();
      }
    };
    try {
      for (let race = 0; race < 20; race++) {
        const schema = testSchema();
        const clients = await Promise.all([0, 1, 2].map(async () => pool.connect()));
        const creators = [
          ...clients.map(async (c) => new LeaseTable(schema, 5_000).prepare(c as pg.Client, ["default"])),
          migratePostgres(on, schema, pg.escapeIdentifier(schema)),
          migratePostgres(on, schema, pg.escapeIdentifier(schema)),
        ];
        for (const r of await Promise.allSettled(creators)) if (r.status === "rejected") failures.push(String(r.reason));
        for (const c of clients) c.release();
      }
    } finally {
      await pool.end();
    }
    expect(failures).toEqual([]);
  }, 60_000);
});
