/**
 * The record writes of a PostgreSQL state, in the transaction the backend runs on its lock's
 * connection (postgres-backend.ts): a group of records, and the claims of the ownership registry
 * with the records they win — one transaction, so the claim and its record commit or roll back
 * together (the registry's table is in the same database: postgres-ownership.ts).
 */
import type pg from "pg";
import { boundRecord } from "../bound-record.js";
import { checkedClaims, wonRecords } from "../ownership/claimed-records.js";
import type { OwnershipRow } from "../ownership/ownership.js";
import type { ClaimedRecord } from "../state.js";
import { claimRowsIn } from "../ownership/postgres-claims.js";
import type { ResourceRecord } from "../state.js";

/** Writes `group` in the caller's transaction (`s`: the state's schema, escaped): each write bumps the serial by one. */
export async function writeGroupIn(c: pg.ClientBase, s: string, group: readonly ResourceRecord[]): Promise<void> {
  const last = Number(
    (await c.query<{ serial: string }>(`UPDATE ${s}.meta SET serial = serial + $1 WHERE id = 1 RETURNING serial`, [group.length])).rows[0]!.serial,
  );
  // one row per resource (the latest of the group), with the serial of that write
  const latest = new Map<string, { record: ResourceRecord; serial: number }>();
  group.forEach((record, i) => latest.set(record.id, { record, serial: last - group.length + 1 + i }));
  const rows = [...latest.values()];
  await c.query(
    `INSERT INTO ${s}.resources (id, kind, record, serial, updated_at)
     SELECT id, kind, record, serial, now() FROM unnest($1::text[], $2::text[], $3::jsonb[], $4::bigint[]) AS t(id, kind, record, serial)
     ON CONFLICT (id) DO UPDATE SET kind = EXCLUDED.kind, record = EXCLUDED.record, serial = EXCLUDED.serial, updated_at = now()`,
    [rows.map((r) => r.record.id), rows.map((r) => r.record.kind), rows.map((r) => JSON.stringify(r.record)), rows.map((r) => r.serial)],
  );
}

/** Claims what `entries` claim and writes the records of the claims won, in the caller's transaction; answers the registry's rows after it. */
export async function claimingWriteIn(c: pg.ClientBase, s: string, entries: readonly ClaimedRecord[], now: string): Promise<OwnershipRow[]> {
  const rows = await claimRowsIn(c, checkedClaims(entries), now);
  const won = wonRecords(entries, rows);
  if (won.length > 0) await writeGroupIn(c, s, won.map(boundRecord));
  return rows;
}
