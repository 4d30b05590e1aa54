/**
 * The ownership registry in PostgreSQL: the table `gatesync_ownership.owners` of the state's
 * database, shared by every environment and every daemon whose states live there. Its
 * connections are the state backend's (PostgresStateBackend.transaction): whatever decides how
 * the state's connections are pooled decides the registry's too. A claim is one transaction of
 * `INSERT … ON CONFLICT DO NOTHING`: two claimants of one new object race on the primary key,
 * and the second finds the first's row.
 */
import type pg from "pg";
import { createSchema } from "../postgres/postgres-schema.js";
import type { PostgresStateBackend } from "../postgres/postgres-backend.js";
import { claimRowsIn, columns, ownershipSchema, t, validRows } from "./postgres-claims.js";
export { ownershipSchema } from "./postgres-claims.js";
import type { Claimant, OwnershipClaim, OwnershipKey, OwnershipRegistry, OwnershipRow, OwnershipTarget } from "./ownership.js";

export class PostgresOwnership implements OwnershipRegistry {
  readonly description: string;
  private ready: Promise<void> | undefined;

  /** `backend`: a state backend of the database (its own schema untouched: only its connections are used). */
  constructor(private readonly backend: PostgresStateBackend) {
    this.description = `ownership registry (postgres schema ${ownershipSchema})`;
  }

  private prepared(): Promise<void> {
    this.ready ??= this.backend
      .transaction("prepare the ownership registry", async (c) => {
        await createSchema(c, ownershipSchema, ownershipSchema);
        await c.query(`CREATE TABLE IF NOT EXISTS ${t} (
          interface text NOT NULL, url text NOT NULL, object text NOT NULL,
          owner text NOT NULL, environment text NOT NULL, resource text NOT NULL, claimed_at text NOT NULL,
          PRIMARY KEY (interface, url, object))`);
      })
      .catch((err: unknown) => {
        this.ready = undefined;
        throw err;
      });
    return this.ready;
  }

  private async run<T>(what: string, work: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    await this.prepared();
    return this.backend.transaction(what, work);
  }

  /** A read of one statement: no BEGIN and COMMIT around it (two round trips of each run's three reads). */
  private async read<T>(work: (c: pg.PoolClient) => Promise<T>): Promise<T> {
    await this.prepared();
    return this.backend.statement("read the ownership registry", work);
  }

  rowsOf(targets: readonly OwnershipTarget[]): Promise<OwnershipRow[]> {
    return this.read(async (c) => {
      const rows = await c.query(
        `SELECT ${columns} FROM ${t} WHERE (interface, url) IN (SELECT * FROM unnest($1::text[], $2::text[])) ORDER BY interface, url, object`,
        [targets.map((x) => x.interface), targets.map((x) => x.url)],
      );
      return validRows(rows.rows);
    });
  }

  rowsAt(keys: readonly OwnershipKey[]): Promise<OwnershipRow[]> {
    if (keys.length === 0) return Promise.resolve([]);
    return this.read(async (c) => {
      const rows = await c.query(
        `SELECT ${columns} FROM ${t} WHERE (interface, url, object) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[])) ORDER BY interface, url, object`,
        [keys.map((k) => k.interface), keys.map((k) => k.url), keys.map((k) => k.object)],
      );
      return validRows(rows.rows);
    });
  }

  othersHold(target: OwnershipTarget, kind: string, me: Claimant): Promise<boolean> {
    return this.read(async (c) => {
      // the primary key's prefix (interface, url) bounds the scan to the target's rows; nothing but a boolean comes back
      const rows = await c.query<{ held: boolean }>(
        `SELECT EXISTS (SELECT 1 FROM ${t} WHERE interface = $1 AND url = $2 AND starts_with(object, $3) AND (owner <> $4 OR environment <> $5)) AS held`,
        [target.interface, target.url, `${kind}:`, me.owner, me.environment],
      );
      return rows.rows[0]?.held === true;
    });
  }

  all(): Promise<OwnershipRow[]> {
    return this.read(async (c) => validRows((await c.query(`SELECT ${columns} FROM ${t} ORDER BY interface, url, object`)).rows));
  }

  claim(claims: readonly OwnershipClaim[], now: string): Promise<OwnershipRow[]> {
    if (claims.length === 0) return Promise.resolve([]);
    return this.run("write the ownership registry", async (c) => claimRowsIn(c, claims, now));
  }

  release(key: OwnershipKey): Promise<OwnershipRow | undefined> {
    return this.run("write the ownership registry", async (c) => {
      const rows = await c.query(`DELETE FROM ${t} WHERE interface = $1 AND url = $2 AND object = $3 RETURNING ${columns}`, [
        key.interface,
        key.url,
        key.object,
      ]);
      return validRows(rows.rows)[0];
    });
  }

  transfer(key: OwnershipKey, to: Claimant, now: string): Promise<OwnershipRow | undefined> {
    return this.run("write the ownership registry", async (c) => {
      const before = await c.query(`SELECT ${columns} FROM ${t} WHERE interface = $1 AND url = $2 AND object = $3 FOR UPDATE`, [
        key.interface,
        key.url,
        key.object,
      ]);
      if (before.rows.length === 0) return undefined;
      await c.query(`UPDATE ${t} SET owner = $4, environment = $5, claimed_at = $6 WHERE interface = $1 AND url = $2 AND object = $3`, [
        key.interface,
        key.url,
        key.object,
        to.owner,
        to.environment,
        now,
      ]);
      return validRows(before.rows)[0];
    });
  }

  close(): Promise<void> {
    return this.backend.close();
  }
}
