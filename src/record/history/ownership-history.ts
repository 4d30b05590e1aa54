/**
 * The audit of the ownership registry (docs/user/teams.md): each `gatesync ownership release` and
 * `transfer` is a row of the history of the environment it was run for, in its state, beside the
 * freezes and promotions: who held the object, who holds it now, why.
 */
import type { HistoryEntry, HistoryRecord, HistoryStore } from "./history.js";

export interface OwnershipRecord extends HistoryRecord {
  readonly kind: "ownership";
  readonly act: "release" | "transfer";
  readonly interface: string;
  readonly url: string;
  readonly object: string;
  /** Who held it before the act. */
  readonly from: { readonly owner: string; readonly environment: string };
  /** Who holds it after a transfer. */
  readonly to?: { readonly owner: string; readonly environment: string };
  /** Why, as the operator wrote it (bounded, control characters out). */
  readonly reason: string;
}

/** An ownership row as read, checked (storage may be damaged); undefined when it is not one. */
export function ownershipEntryOf(entry: HistoryEntry): HistoryEntry<OwnershipRecord> | undefined {
  const r = entry.record as Partial<Record<keyof OwnershipRecord, unknown>>;
  if (r.kind !== "ownership" || (r.act !== "release" && r.act !== "transfer") || typeof r.object !== "string" || typeof r.from !== "object") return undefined;
  return entry as HistoryEntry<OwnershipRecord>;
}

/** The newest ownership rows, newest first. */
export async function readOwnershipActs(store: HistoryStore, limit: number): Promise<Array<HistoryEntry<OwnershipRecord>>> {
  return (await store.readHistory({ kind: "ownership", limit })).flatMap((e) => ownershipEntryOf(e) ?? []);
}
