/**
 * A record keeps at most `maxAnswerBytes` of what a server sent (its answer, an error text, the
 * results of the post-apply checks): the state never grows with the size of an answer. What is
 * cut is replaced by a marker saying how much there was.
 */
import { heldPayload } from "./wrappers/lazy-record.js";
import type { ResourceRecord } from "./state.js";

export const maxAnswerBytes = 16 * 1024;

/** Stands where an answer was cut. */
export interface TruncatedAnswer {
  readonly truncated: true;
  /** Bytes of the answer as JSON. */
  readonly bytes: number;
  /** The first bytes of that JSON text (at most maxAnswerBytes). */
  readonly head: string;
}

/** The first `max` bytes of `text` as UTF-8, never splitting a character. */
function utf8Head(text: string, max: number): string {
  const buf = Buffer.from(text, "utf8");
  if (buf.length <= max) return text;
  let end = max;
  // step back over continuation bytes (10xxxxxx) so the cut falls between characters
  while (end > 0 && (buf[end]! & 0xc0) === 0x80) end--;
  return buf.subarray(0, end).toString("utf8");
}

/** `value` itself when its JSON fits in `max` bytes, else a marker with the head of it. */
export function boundAnswer(value: unknown, max = maxAnswerBytes): unknown {
  if (value === undefined) return undefined;
  const text = JSON.stringify(value) ?? "";
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= max) return value;
  const cut: TruncatedAnswer = { truncated: true, bytes, head: utf8Head(text, max) };
  return cut;
}

/** A text cut to `max` bytes, saying how much was cut. */
export function boundText(text: string, max = maxAnswerBytes): string {
  const bytes = Buffer.byteLength(text, "utf8");
  if (bytes <= max) return text;
  return `${utf8Head(text, max)}… [cut: ${bytes - max} more bytes of ${bytes}]`;
}

/** The record with every server-sent part bounded; the same object when nothing needed cutting. */
export function boundRecord(record: ResourceRecord): ResourceRecord {
  const answer = record.response?.read();
  const response = boundAnswer(answer);
  const error = record.error === undefined ? undefined : boundText(record.error);
  const health = record.health?.read();
  const results = health === undefined ? undefined : boundAnswer(health.results);
  if (response === answer && error === record.error && results === health?.results) return record;
  return {
    ...record,
    ...(response === undefined ? {} : { response: heldPayload(response) }),
    ...(error === undefined ? {} : { error }),
    ...(health === undefined ? {} : { health: heldPayload({ ...health, results: Array.isArray(results) ? results : [results] }) }),
  };
}
