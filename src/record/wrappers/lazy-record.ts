/**
 * Records read from the state keep their big JSON payloads (what was last applied — for an
 * ApiDefinition the whole OpenAPI document —, what was attempted, the server's last answer,
 * the health results) as the JSON text storage gave: each payload field of a `ResourceRecord`
 * is a `Deferred` (src/deferred.ts) whose `read()` parses. A plan of unchanged resources reads
 * none of them: it compares content hashes.
 *
 * The types say where parsing happens: a reader calls `record.applied?.read()`. Serialised, a
 * payload is its value (`toJSON`), so `JSON.stringify(record)` — the state written back, a
 * pulled state — is the record as stored. A payload that storage was not asked for
 * (a record read by `readHeads`, its payloads not read since) is an `UnreadPayload`: its `read()` throws `InternalError`.
 */
import { HeldValue } from "../../deferred.js";
import { InternalError } from "../../errors.js";
import type { RecordPayload, ResourceRecord } from "../state.js";

export const payloadFields = ["applied", "attempted", "response", "health"] as const;
export type PayloadField = (typeof payloadFields)[number];

/** A record without its payloads: all a reader that must not parse them (or that was not given them) may see. */
export type RecordHead = Omit<ResourceRecord, PayloadField>;

/** The value a payload field holds (the `T` of its `RecordPayload<T>`). */
export type PayloadValue<F extends PayloadField> = NonNullable<ResourceRecord[F]> extends RecordPayload<infer T> ? T : never;

/** Stands for a payload the record holds but that was not read from storage (see StateBackend.readHeads). */
export const unreadPayload: unique symbol = Symbol("payload not read");

/** The payloads of one record as JSON text (or unreadPayload), absent ones left out. */
export type PayloadTexts = Partial<Record<PayloadField, string | typeof unreadPayload>>;

/** Turns a payload's JSON text into its value (JSON.parse, perhaps followed by a scrub). */
export type PayloadDecoder = (text: string) => unknown;

/**
 * A payload as storage gave it: its JSON text. `read()` parses it — a fresh value each time,
 * nothing cached — and cannot fail (the state holds JSON). One small object per payload: the
 * text is all it keeps (a decoder of its own is `DecodedPayload`'s).
 */
export class StoredPayload<T> implements RecordPayload<T> {
  constructor(readonly text: string) {}

  /** How the text becomes the value. */
  decode(text: string): unknown {
    return JSON.parse(text) as unknown;
  }

  read(): T {
    return this.decode(this.text) as T;
  }

  toJSON(): unknown {
    return this.read();
  }
}

/** A payload held as its text whose value is made by its own decoder (the redaction layer's: parse, then scrub). */
class DecodedPayload<T> extends StoredPayload<T> {
  constructor(
    text: string,
    private readonly decoder: PayloadDecoder,
  ) {
    super(text);
  }

  override decode(text: string): unknown {
    return this.decoder(text);
  }
}

const storedPayload = (text: string, decode: PayloadDecoder | undefined): StoredPayload<unknown> =>
  decode === undefined ? new StoredPayload(text) : new DecodedPayload(text, decode);

/** A payload the record holds in storage but that this reading did not ask for: `read()` (and serialising it) throws `InternalError`. */
export class UnreadPayload implements RecordPayload<never> {
  constructor(
    readonly id: string,
    readonly field: PayloadField,
  ) {}

  read(): never {
    throw new InternalError(`${this.id}: its ${this.field} was not read from the state (this reading chose which payloads to read)`);
  }

  toJSON(): never {
    return this.read();
  }
}

/** A payload made in memory (by the apply, a command, a test): held as the value. */
export const heldPayload = <T>(value: T): RecordPayload<T> => new HeldValue(value);

/** The payload's value, read (parsed when stored as text), or undefined when the record holds none. */
export function payloadOf<F extends PayloadField>(record: Pick<ResourceRecord, F>, field: F): PayloadValue<F> | undefined {
  return (record[field] as RecordPayload<PayloadValue<F>> | undefined)?.read();
}

/**
 * `head` (a record without its payloads, a fresh object that becomes the record: copying it
 * would give every record a hidden class of its own) with each payload of `texts` held as its text.
 */
export function lazyRecord(head: Record<string, unknown>, texts: PayloadTexts, decode?: PayloadDecoder): ResourceRecord {
  const record = head;
  for (const field of payloadFields) {
    const text = texts[field];
    if (text === undefined) continue;
    record[field] = text === unreadPayload ? new UnreadPayload(String(head.id), field) : storedPayload(text, decode);
  }
  return record as unknown as ResourceRecord;
}

/** Whether the record holds the payload, without reading it. */
export function holdsPayload(record: ResourceRecord, field: PayloadField): boolean {
  return record[field] !== undefined;
}

/** The payloads of the record held as text from storage (a plan of unchanged records reads none of them). */
export function unparsedPayloads(record: ResourceRecord): PayloadField[] {
  return payloadFields.filter((f) => record[f] instanceof StoredPayload);
}

/** The payloads the record holds but that were not read from storage. */
export function unreadPayloads(record: ResourceRecord): PayloadField[] {
  return payloadFields.filter((f) => record[f] instanceof UnreadPayload);
}

/** The record without its payload fields (a copy). */
export function headOf(record: ResourceRecord): Record<string, unknown> {
  const head: Record<string, unknown> = { ...record };
  for (const f of payloadFields) delete head[f];
  return head;
}

/**
 * The record with `head` applied to its head and `value` to each payload's value: still held
 * as text, `value` is applied when it is read (the redaction layer scrubs records read from
 * storage this way without parsing their payloads); made in memory, at once. Unread payloads stay unread.
 */
export function mapLazyRecord(
  record: ResourceRecord,
  head: (value: Record<string, unknown>) => Record<string, unknown>,
  value: (value: unknown) => unknown,
): ResourceRecord {
  return mapRecord(record, head, (payload) => {
    if (payload instanceof UnreadPayload) return payload;
    if (payload instanceof StoredPayload) {
      return new DecodedPayload(payload.text, (text) => value(payload.decode(text)));
    }
    return heldPayload(value(payload.read()));
  });
}

/** The record with `head` applied to its head and every payload read and `value` applied to it, held in memory (what is written to storage). */
export function withReadPayloads(
  record: ResourceRecord,
  head: (value: Record<string, unknown>) => Record<string, unknown>,
  value: (value: unknown) => unknown,
): ResourceRecord {
  return mapRecord(record, head, (payload) => heldPayload(value(payload.read())));
}

/** The record with `head` applied to its head and `payload` to each payload, its fields in their order (the stored JSON keeps it). */
function mapRecord(
  record: ResourceRecord,
  head: (value: Record<string, unknown>) => Record<string, unknown>,
  payload: (value: RecordPayload<unknown>) => RecordPayload<unknown>,
): ResourceRecord {
  const mapped = head(headOf(record));
  const out: Record<string, unknown> = {};
  for (const key of Object.keys(record)) {
    const held: unknown = (record as unknown as Record<string, unknown>)[key];
    if (isPayloadField(key)) {
      if (held !== undefined) out[key] = payload(held as RecordPayload<unknown>);
    } else if (key in mapped) out[key] = mapped[key];
  }
  for (const key of Object.keys(mapped)) if (!(key in out)) out[key] = mapped[key];
  return out as unknown as ResourceRecord;
}

const isPayloadField = (key: string): key is PayloadField => (payloadFields as readonly string[]).includes(key);

/** A record parsed whole from JSON (a pulled state, the legacy state file): its payload values held as they are. */
export function recordOfJson(value: Record<string, unknown>): ResourceRecord {
  const record: Record<string, unknown> = { ...value };
  for (const f of payloadFields) if (record[f] !== undefined) record[f] = heldPayload(record[f]);
  return record as unknown as ResourceRecord;
}
