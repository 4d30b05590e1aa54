/**
 * The snapshot of a PostgreSQL state, in the read transaction: each record without its payloads
 * (parsed) and each payload's JSON text, parsed when read (lazy-record.ts) — or, with a chooser,
 * first only whether each payload is there, then the payloads of the records it chooses.
 */
import type pg from "pg";
import { ErrorCode, StateError } from "../../errors.js";
import { payloadFields } from "../wrappers/lazy-record.js";
import { payloadTexts, recordsOf, withPayloads } from "../read-rows.js";
import type { HeadRow, PayloadColumns } from "../read-rows.js";
import type { ReadOptions, StateSnapshot } from "../state.js";
import { stateFormatVersion } from "../state.js";

/** A record's row as read: the record without its payloads, and each payload's JSON text or presence. */
type Row = { readonly id: string; readonly head: unknown } & PayloadColumns;

export async function readSnapshotIn(
  client: pg.PoolClient,
  s: string,
  chooser: ReadOptions["payloadsFor"],
  corrupt: (what: string) => StateError,
): Promise<StateSnapshot> {
  const meta = (
    await client.query<{ format_version: number; lineage: string; serial: string; hash_key: string | null }>(
      `SELECT format_version, lineage, serial, hash_key FROM ${s}.meta WHERE id = 1`,
    )
  ).rows[0];
  if (meta === undefined) throw corrupt("the meta row is missing");
  if (meta.format_version > stateFormatVersion) {
    throw new StateError(ErrorCode.STATE_VERSION, `the state has format ${meta.format_version}; this gatesync reads format ${stateFormatVersion}`, {
      hint: "use the newer gatesync that wrote it",
    });
  }
  const texts = payloadFields.map((f) => `(record -> '${f}')::text AS ${f}`).join(", ");
  const columns = chooser === undefined ? texts : payloadFields.map((f) => `(record -> '${f}') IS NOT NULL AS ${f}`).join(", ");
  const head = `CASE jsonb_typeof(record) WHEN 'object' THEN record ${payloadFields.map((f) => `- '${f}'`).join(" ")} ELSE record END AS head`;
  const rows: HeadRow[] = (await client.query<Row>(`SELECT id, ${head}, ${columns} FROM ${s}.resources ORDER BY id`)).rows.map((r) => ({
    id: r.id,
    head: r.head,
    texts: payloadTexts(r),
  }));
  const heads: StateSnapshot = {
    lineage: meta.lineage,
    serial: Number(meta.serial),
    hashKey: meta.hash_key ?? undefined,
    resources: recordsOf(rows, (what) => corrupt(what)),
  };
  if (chooser === undefined) return heads;
  const chosen = [...chooser(heads)];
  const loaded = (await client.query<Row>(`SELECT id, ${texts} FROM ${s}.resources WHERE id = ANY($1::text[])`, [chosen])).rows;
  return withPayloads(heads, rows, new Map(loaded.map((r) => [r.id, payloadTexts(r)])));
}
