/**
 * What both backends do with the rows they read: each record's head (the record without its
 * payloads) checked and joined with its payloads as lazily parsed JSON text (lazy-record.ts),
 * and, when the reader reads the heads first (StateBackend.readHeads), the records it chose
 * completed with the payloads read for them (readPayloads).
 */
import type { StateError } from "../errors.js";
import { headOf, lazyRecord, payloadFields, unreadPayload } from "./wrappers/lazy-record.js";
import type { PayloadField, PayloadTexts } from "./wrappers/lazy-record.js";
import type { ResourceRecord, StateSnapshot } from "./state.js";
import { recordProblem } from "./state.js";

/** A record's row: its head, parsed, and its payloads (text, or unreadPayload when only their presence was read). */
export interface HeadRow {
  readonly id: string;
  readonly head: unknown;
  readonly texts: PayloadTexts;
}

/** A row's payload columns: JSON text (SQL NULL when absent), or whether the record holds it. */
export type PayloadColumns = { readonly [F in PayloadField]: string | boolean | number | null };

/** The payloads of a row's columns: texts as they are, a held payload not read as unreadPayload. */
export function payloadTexts(columns: PayloadColumns): PayloadTexts {
  const texts: PayloadTexts = {};
  for (const f of payloadFields) {
    const value = columns[f];
    if (typeof value === "string") texts[f] = value;
    else if (value === true || value === 1) texts[f] = unreadPayload;
  }
  return texts;
}

/** The records of `rows`, checked; a row that is not a record is `corrupt`. */
export function recordsOf(rows: readonly HeadRow[], corrupt: (what: string) => StateError): Map<string, ResourceRecord> {
  const resources = new Map<string, ResourceRecord>();
  for (const row of rows) {
    const problem = recordProblem(row.head);
    if (problem !== undefined) throw corrupt(`row ${row.id}: ${problem}`);
    if ((row.head as ResourceRecord).id !== row.id) throw corrupt(`row ${row.id} holds ${(row.head as ResourceRecord).id}`);
    resources.set(row.id, lazyRecord(row.head as Record<string, unknown>, row.texts));
  }
  return resources;
}

/** `heads` with the records whose payloads were read (`loaded`, by id) completed with them. */
export function withPayloads(heads: StateSnapshot, loaded: ReadonlyMap<string, PayloadTexts>): StateSnapshot {
  if (loaded.size === 0) return heads;
  const resources = new Map(heads.resources);
  for (const [id, texts] of loaded) {
    const record = heads.resources.get(id);
    // the row's head became the record without payloads: the record with them gets a copy
    if (record !== undefined) resources.set(id, lazyRecord(headOf(record), texts));
  }
  return { ...heads, resources };
}
