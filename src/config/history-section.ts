/** `history:` of gatesync.yaml, the operator's: how much of each environment's history its state keeps (record/history.ts). */
import { defaultHistoryBound } from "../record/history.js";
import type { HistoryBound } from "../record/history.js";
import { parseDuration } from "./duration.js";

/** The section as the schema let it through (checked before this runs); absent: 500 rows, 30 days. */
export function historyFromDocument(raw: unknown): HistoryBound {
  const h = (raw ?? {}) as { keep?: number; maxAge?: string };
  return { keep: h.keep ?? defaultHistoryBound.keep, maxAgeMs: h.maxAge === undefined ? defaultHistoryBound.maxAgeMs : parseDuration(h.maxAge) };
}
