/**
 * The snapshot of a PostgreSQL state, in the read transaction: each record without its payloads
 * (parsed) and each payload's JSON text, parsed when read (lazy-record.ts) — or only whether
 * each payload is there (the heads), and later the payloads of the records a reader chose.
 */
import type pg from "pg";
import type { StateError } from "../../errors.js";
import { payloadFields } from "../wrappers/lazy-record.js";
import { payloadTexts, recordsOf, withPayloads } from "../read-rows.js";
import type { HeadRow, PayloadColumns } from "../read-rows.js";
import type { StateSnapshot } from "../state.js";
import { checkStateFormat, movedSince } from "../state.js";

/** A record's row as read: the record without its payloads, and each payload's JSON text or presence. */
type Row = { readonly id: string; readonly head: unknown } & PayloadColumns;

type Meta = { format_version: number; lineage: string; serial: string; hash_key: string | null };

async function metaIn(client: pg.PoolClient, s: string, corrupt: (what: string) => StateError): Promise<Meta> {
  const meta = (await client.query<Meta>(`SELECT format_version, lineage, serial, hash_key FROM ${s}.meta WHERE id = 1`)).rows[0];
  if (meta === undefined) throw corrupt("the meta row is missing");
  checkStateFormat(meta.format_version);
  return meta;
}

const texts = payloadFields.map((f) => `(record -> '${f}')::text AS ${f}`).join(", ");

/** The snapshot: every record with its payloads' texts ("full"), or with only whether each payload is there ("heads"). */
export async function readSnapshotIn(client: pg.PoolClient, s: string, what: "full" | "heads", corrupt: (what: string) => StateError): Promise<StateSnapshot> {
  const meta = await metaIn(client, s, corrupt);
  const columns = what === "full" ? texts : payloadFields.map((f) => `(record -> '${f}') IS NOT NULL AS ${f}`).join(", ");
  const head = `CASE jsonb_typeof(record) WHEN 'object' THEN record ${payloadFields.map((f) => `- '${f}'`).join(" ")} ELSE record END AS head`;
  const rows: HeadRow[] = (await client.query<Row>(`SELECT id, ${head}, ${columns} FROM ${s}.resources ORDER BY id`)).rows.map((r) => ({
    id: r.id,
    head: r.head,
    texts: payloadTexts(r),
  }));
  return {
    lineage: meta.lineage,
    serial: Number(meta.serial),
    hashKey: meta.hash_key ?? undefined,
    resources: recordsOf(rows, (what) => corrupt(what)),
  };
}

/** `heads` with the payloads of `ids`, or the state in full when it was written since the heads were read. */
export async function readPayloadsIn(
  client: pg.PoolClient,
  s: string,
  chosen: { readonly heads: StateSnapshot; readonly ids: ReadonlySet<string> },
  corrupt: (what: string) => StateError,
): Promise<StateSnapshot> {
  const meta = await metaIn(client, s, corrupt);
  if (movedSince(chosen.heads, { lineage: meta.lineage, serial: Number(meta.serial) })) return readSnapshotIn(client, s, "full", corrupt);
  const loaded = (await client.query<Row>(`SELECT id, ${texts} FROM ${s}.resources WHERE id = ANY($1::text[])`, [[...chosen.ids]])).rows;
  return withPayloads(chosen.heads, new Map(loaded.map((r) => [r.id, payloadTexts(r)])));
}
