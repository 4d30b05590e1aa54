/**
 * Records read from the state keep their big JSON payloads (what was last applied — for an
 * ApiDefinition the whole OpenAPI document —, what was attempted, the server's last answer,
 * the health results) as the JSON text storage gave, and parse a payload the first time it is
 * read. A plan of unchanged resources reads none of them: it compares content hashes.
 *
 * The laziness is invisible to readers: a payload is an enumerable getter that parses once
 * and then becomes a plain (read-only) property, so `record.applied`, `{ ...record }`,
 * `JSON.stringify(record)` and structured clones see exactly the record that was stored.
 * Only code that must not parse asks `holdsPayload` instead of comparing with undefined.
 */
import { InternalError } from "../errors.js";
import type { ResourceRecord } from "./state.js";

export const payloadFields = ["applied", "attempted", "response", "health"] as const;
export type PayloadField = (typeof payloadFields)[number];

/** A record without its payloads: all a reader that must not parse them (or that was not given them) may see. */
export type RecordHead = Omit<ResourceRecord, PayloadField>;

/** Stands for a payload the record holds but that was not read from storage (see ReadOptions). */
export const unreadPayload: unique symbol = Symbol("payload not read");

/** The payloads of one record as JSON text (or unreadPayload), absent ones left out. */
export type PayloadTexts = Partial<Record<PayloadField, string | typeof unreadPayload>>;

/** Turns a payload's JSON text into its value (JSON.parse, perhaps followed by a scrub). */
export type PayloadDecoder = (text: string) => unknown;

/*
 * A payload not parsed yet is an accessor whose getter (one function per field, shared by every
 * record, so records share their hidden classes) finds the text and the decoder under hidden
 * (non-enumerable, symbol-keyed) properties of the record: no closure and no map per record.
 */
const textKey: Readonly<Record<PayloadField, symbol>> = {
  applied: Symbol("applied text"),
  attempted: Symbol("attempted text"),
  response: Symbol("response text"),
  health: Symbol("health text"),
};
const decoderKey = Symbol("payload decoder");

type Hidden = Record<PropertyKey, unknown>;

const parseJson: PayloadDecoder = (text) => JSON.parse(text) as unknown;

function materialise(record: Hidden, field: PayloadField): unknown {
  const text = record[textKey[field]] as string | typeof unreadPayload;
  if (text === unreadPayload)
    throw new InternalError(`${String(record.id)}: its ${field} was not read from the state (this reading chose which payloads to read)`);
  const value = (record[decoderKey] as PayloadDecoder)(text);
  record[textKey[field]] = undefined;
  Object.defineProperty(record, field, { value, enumerable: true, writable: true, configurable: true });
  return value;
}

const getters: Readonly<Record<PayloadField, (this: Hidden) => unknown>> = {
  applied(this: Hidden) {
    return materialise(this, "applied");
  },
  attempted(this: Hidden) {
    return materialise(this, "attempted");
  },
  response(this: Hidden) {
    return materialise(this, "response");
  },
  health(this: Hidden) {
    return materialise(this, "health");
  },
};

const pendingText = (record: ResourceRecord, field: PayloadField): string | typeof unreadPayload | undefined =>
  (record as unknown as Hidden)[textKey[field]] as string | typeof unreadPayload | undefined;

/**
 * `head` (a record without its payloads, a fresh object that becomes the record: copying it
 * would give every record a hidden class of its own) with each payload of `texts` parsed on
 * first read.
 */
export function lazyRecord(head: Record<string, unknown>, texts: PayloadTexts, decode: PayloadDecoder = parseJson): ResourceRecord {
  const record = head as Hidden;
  if (payloadFields.every((f) => texts[f] === undefined)) return record as unknown as ResourceRecord;
  Object.defineProperty(record, decoderKey, { value: decode, enumerable: false, writable: false, configurable: false });
  for (const field of payloadFields) {
    const text = texts[field];
    if (text === undefined) continue;
    Object.defineProperty(record, textKey[field], { value: text, enumerable: false, writable: true, configurable: false });
    Object.defineProperty(record, field, { get: getters[field], enumerable: true, configurable: true });
  }
  return record as unknown as ResourceRecord;
}

/** Whether the record holds the payload, without parsing it. */
export function holdsPayload(record: ResourceRecord, field: PayloadField): boolean {
  return pendingText(record, field) !== undefined || record[field] !== undefined;
}

/** The payloads of the record not parsed yet, read or not (a plan of unchanged records leaves them all so). */
export function unparsedPayloads(record: ResourceRecord): PayloadField[] {
  return payloadFields.filter((f) => pendingText(record, f) !== undefined);
}

/**
 * The record with `head` applied to everything already parsed and `decode` to each payload
 * still held as text (when it is read): the redaction layer scrubs records read this way
 * without parsing their payloads.
 */
export function mapLazyRecord(
  record: ResourceRecord,
  head: (value: Record<string, unknown>) => Record<string, unknown>,
  decode: (value: unknown) => unknown,
): ResourceRecord {
  const pending = unparsedPayloads(record);
  if (pending.length === 0) return head(record as unknown as Record<string, unknown>) as unknown as ResourceRecord;
  const parsed: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(Object.getOwnPropertyDescriptors(record))) {
    if (!pending.includes(key as PayloadField)) parsed[key] = value.value;
  }
  const texts: PayloadTexts = {};
  for (const f of pending) texts[f] = pendingText(record, f)!;
  const inner = (record as unknown as Hidden)[decoderKey] as PayloadDecoder;
  return lazyRecord(head(parsed), texts, (text) => decode(inner(text)));
}

/** The payloads the record holds but that were not read from storage. */
export function unreadPayloads(record: ResourceRecord): PayloadField[] {
  return payloadFields.filter((f) => pendingText(record, f) === unreadPayload);
}
