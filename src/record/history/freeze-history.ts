/**
 * Freezes of an environment (docs/user/promotion.md#freezes-and-windows): `gatesync freeze` and
 * `unfreeze` are rows of the environment's own history, in its state — SQLite or PostgreSQL —
 * so a freeze survives a restart and every replica reads it; the newest row of the kind always
 * stays whatever `history:` bounds (history.ts), so the freeze in force is never pruned, and the
 * older rows are the audit of who froze and unfroze, when and why.
 */
import type { HistoryEntry, HistoryRecord, HistoryStore } from "./history.js";

export interface FreezeRecord extends HistoryRecord {
  readonly kind: "freeze";
  /** true: frozen from `startedAt`; false: unfrozen. */
  readonly frozen: boolean;
  /** Why, as the operator wrote it (bounded, control characters out). */
  readonly reason: string;
  /** When the freeze lifts by itself (ISO time); absent: until `gatesync unfreeze`. */
  readonly until?: string;
  /** Who: the variable of the token used (never its value). */
  readonly by: string;
}

/** A freeze row as read, checked (storage may be damaged); undefined when it is not one. */
export function freezeEntryOf(entry: HistoryEntry): HistoryEntry<FreezeRecord> | undefined {
  const r = entry.record as Partial<Record<keyof FreezeRecord, unknown>>;
  if (r.kind !== "freeze" || typeof r.frozen !== "boolean" || typeof r.reason !== "string" || typeof r.by !== "string") return undefined;
  if (r.until !== undefined && (typeof r.until !== "string" || Number.isNaN(Date.parse(r.until)))) return undefined;
  return entry as HistoryEntry<FreezeRecord>;
}

/** The newest freeze rows, newest first (the first is the one in force). */
export async function readFreezes(store: HistoryStore, limit: number): Promise<Array<HistoryEntry<FreezeRecord>>> {
  return (await store.readHistory({ kind: "freeze", limit })).flatMap((e) => freezeEntryOf(e) ?? []);
}

/** The freeze in force at `now`, if any (an unfreeze, or an `until` past, lifts it). */
export async function freezeInForce(store: HistoryStore, now: number): Promise<FreezeRecord | undefined> {
  const newest = (await readFreezes(store, 1))[0]?.record;
  if (newest === undefined || !newest.frozen) return undefined;
  return newest.until !== undefined && Date.parse(newest.until) <= now ? undefined : newest;
}
