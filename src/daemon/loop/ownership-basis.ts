/**
 * The ownership registry's part of the daemon's skip decision (run-basis.ts): a run is skipped
 * as "nothing changed" only while the registry's rows of the objects the last good run checked —
 * its declared and recorded objects, the APIs they reference — are what that run planned
 * against, with its own apply's claims. A `gatesync ownership transfer` to or from it, or a
 * `release` by an owner it was refused by, is planned at the next run, with no restart; another
 * team's claim of an object this environment never declared is not. Read by key: a tick of each
 * environment costs its own objects' rows, never the registry a fleet shares.
 */
import { createHash } from "node:crypto";
import type { OwnershipView } from "../../plan/ownership-check.js";
import { keyOf } from "../../record/ownership/ownership.js";
import type { OwnershipKey, OwnershipRegistry, OwnershipRow } from "../../record/ownership/ownership.js";

/** The keys a run's skip decision reads again: those the last good run's plan read. */
export type WatchedKeys = readonly OwnershipKey[];

/** A digest of rows (each object's owner and environment), in any order. */
export function ownershipDigest(rows: Iterable<OwnershipRow>): string {
  const lines = [...rows].map((r) => `${keyOf(r)} ${r.owner} ${r.environment}`);
  return createHash("sha256").update(lines.sort().join("\n")).digest("hex");
}

/** The digest of the rows at the watched keys as they stand now (a tick's question). */
export async function currentDigest(registry: OwnershipRegistry, watched: WatchedKeys): Promise<string> {
  return ownershipDigest(await registry.rowsAt(watched));
}

/**
 * What a good run leaves in its basis: the digest of the rows its plan read and of those its own
 * apply claimed (else the next tick would plan again for its own claims), at the keys it read.
 */
export function ownershipBasis(run: { readonly ownershipRead?: OwnershipView; readonly claimed?: readonly OwnershipRow[] }): {
  readonly ownership?: string;
  readonly watched?: WatchedKeys;
} {
  const read = run.ownershipRead;
  if (read?.keys === undefined) return {};
  const rows = new Map(read.rows);
  for (const row of run.claimed ?? []) rows.set(keyOf(row), row);
  return { ownership: ownershipDigest(rows.values()), watched: read.keys };
}
