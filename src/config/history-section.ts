/** `history:` of gatesync.yaml, the operator's: how much of each environment's history its state keeps (record/history.ts). */
import { parseDuration } from "./duration.js";

/** At most `keep` rows, none older than `maxAgeMs`. */
export interface HistoryBound {
  readonly keep: number;
  readonly maxAgeMs: number;
}

export const defaultHistoryBound: HistoryBound = { keep: 500, maxAgeMs: 30 * 24 * 3_600_000 };

/** The section as the schema let it through (checked before this runs); absent: 500 rows, 30 days. */
export function historyFromDocument(raw: unknown): HistoryBound {
  const h = (raw ?? {}) as { keep?: number; maxAge?: string };
  return { keep: h.keep ?? defaultHistoryBound.keep, maxAgeMs: h.maxAge === undefined ? defaultHistoryBound.maxAgeMs : parseDuration(h.maxAge) };
}
