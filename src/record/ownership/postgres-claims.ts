/**
 * The PostgreSQL registry's table and its claim, shared by the registry (postgres-ownership.ts)
 * and the state's claiming write (postgres/postgres-write.ts), which runs it in the record's
 * own transaction.
 */
import type pg from "pg";
import { rowOf } from "./ownership.js";
import type { OwnershipClaim, OwnershipRow } from "./ownership.js";

/** The registry's schema: one per database, whatever the states' schemas. */
export const ownershipSchema = "gatesync_ownership";
export const t = `${ownershipSchema}.owners`;
export const columns = "interface, url, object, owner, environment, resource, claimed_at";

export const validRows = (rows: readonly Record<string, unknown>[]): OwnershipRow[] => rows.map(rowOf).filter((r): r is OwnershipRow => typeof r !== "string");

/**
 * Claims what has no owner yet, in the caller's transaction on `c` (the registry's own, or the
 * state's when a record is written with its claims: postgres-backend.ts), and answers the rows of
 * every claimed object after it. The table exists: a run reads the registry before it claims.
 */
export async function claimRowsIn(c: pg.ClientBase, claims: readonly OwnershipClaim[], now: string): Promise<OwnershipRow[]> {
  if (claims.length === 0) return [];
  const col = (f: (x: OwnershipClaim) => string): string[] => claims.map(f);
  const args = [col((x) => x.interface), col((x) => x.url), col((x) => x.object), col((x) => x.owner), col((x) => x.environment), col((x) => x.resource)];
  await c.query(
    `INSERT INTO ${t} (${columns}) SELECT i, u, o, w, e, r, $7 FROM unnest($1::text[], $2::text[], $3::text[], $4::text[], $5::text[], $6::text[]) AS x(i, u, o, w, e, r)
     ON CONFLICT DO NOTHING`,
    [...args, now],
  );
  const rows = await c.query(
    `SELECT ${columns} FROM ${t} WHERE (interface, url, object) IN (SELECT * FROM unnest($1::text[], $2::text[], $3::text[]))`,
    args.slice(0, 3),
  );
  return validRows(rows.rows);
}
