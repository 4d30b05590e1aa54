/**
 * The record writes of a SQLite state that travel in its group commit (sqlite-backend.ts): one
 * record, and the claims of the ownership registry with the records they win. For the claims,
 * the registry's file (ownership.db beside the state, sqlite-ownership.ts) is attached to the
 * state's connection, so one transaction holds both: a rollback undoes the claim and its record
 * together. Each file commits atomically by itself (WAL): a process killed between the two
 * commits — the state's is first — can leave a record without its claim, which its next apply
 * claims; never a claim without its record.
 */
import type Database from "better-sqlite3";
import { boundRecord } from "../bound-record.js";
import { checkedClaims, wonRecords } from "../ownership/claimed-records.js";
import type { OwnershipRow } from "../ownership/ownership.js";
import type { ClaimedRecord } from "../state.js";
import { attachRegistry, claimRowsIn, ownershipFileBeside } from "../ownership/sqlite-ownership.js";
import type { ResourceRecord } from "../state.js";
import { statement } from "./statements.js";

export type Op = (db: Database.Database) => void;

/** A record's write: the serial bumped, the row replaced. */
export function writeOp(record: ResourceRecord): Op {
  const text = JSON.stringify(boundRecord(record));
  return (db) => {
    const { serial } = statement(db, "UPDATE meta SET serial = serial + 1 WHERE id = 1 RETURNING serial").get() as { serial: number };
    statement(
      db,
      `INSERT INTO resources (id, kind, record, serial, updated_at) VALUES (?, ?, ?, ?, ?)
       ON CONFLICT (id) DO UPDATE SET kind = excluded.kind, record = excluded.record, serial = excluded.serial, updated_at = excluded.updated_at`,
    ).run(record.id, record.kind, text, serial, new Date().toISOString());
  };
}

/** The claims' op (the registry attached first, outside any transaction), and the registry's rows once it ran. */
export function claimingOp(db: Database.Database, stateFile: string, entries: readonly ClaimedRecord[], now: string): { op: Op; rows: () => OwnershipRow[] } {
  const claims = checkedClaims(entries);
  attachRegistry(db, ownershipFileBeside(stateFile));
  let rows: OwnershipRow[] = [];
  const op: Op = (d) => {
    rows = claimRowsIn(d, "ownership.owners", claims, now);
    for (const r of wonRecords(entries, rows)) writeOp(r)(d);
  };
  return { op, rows: () => rows };
}
