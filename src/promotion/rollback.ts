/**
 * Where a rollback goes (docs/user/promotion.md), as a pure rule over the environment's own
 * applied history — its promotion rows, each promotion and each rollback an entry, as Argo CD's
 * history ids. The entries fold into a *lineage*: a promotion (or a rollback `--forward`) puts
 * its entry on top; a rollback goes back to the entry it restored, and what stood above it is
 * taken off. So counting goes back from the one in force along what the environment stood on:
 * two `--steps 1` in a row go v3 → v2 → v1, never back to v3. A revision a rollback took off
 * is newer than the one in force: only `--forward` goes there.
 */

/** A promotion row as the rule reads it. */
export interface AppliedEntry {
  readonly seq: number;
  readonly revision: string;
  readonly rollback: boolean;
  /** A rollback: the entry (its seq) it went back to. */
  readonly restores?: number;
  /** A rollback `--forward`: put on top, as a promotion. */
  readonly forward?: boolean;
}

export interface Lineage {
  /** The entries the environment stands on, oldest first: the last is the one in force (a rollback: the entry it restored). */
  readonly entries: readonly AppliedEntry[];
  /** Revisions the rollbacks since the one in force was applied took off, newest first: newer than the one in force. */
  readonly abandoned: readonly string[];
  /** Every revision the rows name. */
  readonly applied: ReadonlySet<string>;
}

/** Where in `stack` (below its top) the rollback `e` went back to, or -1: none (a forward rollback, or its entry no longer kept). */
function restoredIndex(stack: readonly AppliedEntry[], e: AppliedEntry): number {
  if (!e.rollback || e.forward === true) return -1;
  const below = stack.length - 1;
  if (e.restores !== undefined) {
    const at = stack.findIndex((s) => s.seq === e.restores);
    if (at >= 0 && at < below) return at;
  }
  // a row written before rollbacks named their entry: the newest one of its revision below the top
  for (let i = below - 1; i >= 0; i--) if (stack[i]!.revision === e.revision) return i;
  return -1;
}

/** The lineage of the promotion rows `newestFirst` (as the history reads them). */
export function lineageOf(newestFirst: readonly AppliedEntry[]): Lineage {
  const stack: AppliedEntry[] = [];
  let abandoned: string[] = [];
  for (let i = newestFirst.length - 1; i >= 0; i--) {
    const e = newestFirst[i]!;
    const at = restoredIndex(stack, e);
    if (at < 0) {
      stack.push(e);
      abandoned = [];
      continue;
    }
    abandoned = [
      ...stack
        .slice(at + 1)
        .reverse()
        .map((s) => s.revision),
      ...abandoned,
    ];
    stack.length = at + 1;
  }
  return { entries: stack, abandoned: [...new Set(abandoned)], applied: new Set(newestFirst.map((e) => e.revision)) };
}

/** A rollback target: `--steps` of it, its revision, and the entry a rollback to it restores. */
export interface RollbackTarget {
  readonly steps: number;
  readonly revision: string;
  readonly seq: number;
}

/**
 * The rollback targets, nearest first: each distinct revision below the one in force, from its
 * newest entry down, that `eligible` (the environment verified it: a revision that failed there
 * is no place to go back to) — `--steps N` is the N-th.
 */
export function rollbackTargets(lineage: Lineage, eligible: (revision: string) => boolean): RollbackTarget[] {
  const top = lineage.entries[lineage.entries.length - 1];
  if (top === undefined) return [];
  const seen = new Set([top.revision]);
  const targets: RollbackTarget[] = [];
  for (let i = lineage.entries.length - 2; i >= 0; i--) {
    const e = lineage.entries[i]!;
    if (seen.has(e.revision)) continue;
    seen.add(e.revision);
    if (eligible(e.revision)) targets.push({ steps: targets.length + 1, revision: e.revision, seq: e.seq });
  }
  return targets;
}

/**
 * Where `--to revision` stands against the lineage: the one in force, an earlier entry (a
 * rollback goes there), newer (a rollback since took it off), applied once but not below the one
 * in force (a rollback took it off before a later promotion), or never applied here.
 */
export type RollbackPlace =
  | { readonly place: "in-force" }
  | { readonly place: "earlier"; readonly seq: number }
  | { readonly place: "newer" }
  | { readonly place: "off-lineage" }
  | { readonly place: "not-applied" };

export function placeOf(lineage: Lineage, revision: string): RollbackPlace {
  const entries = lineage.entries;
  if (entries[entries.length - 1]?.revision === revision) return { place: "in-force" };
  for (let i = entries.length - 2; i >= 0; i--) if (entries[i]!.revision === revision) return { place: "earlier", seq: entries[i]!.seq };
  if (lineage.abandoned.includes(revision)) return { place: "newer" };
  return lineage.applied.has(revision) ? { place: "off-lineage" } : { place: "not-applied" };
}
