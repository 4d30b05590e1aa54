/**
 * The lease protocol's decisions, pure: what a replica's round does with what the lease table
 * answered (leases.ts calls these; test/fleet/lease-model.test.ts drives them with simulated
 * replicas, clocks, pauses and lost messages at 10,000 environments over 50 replicas).
 *
 * - The share: ceil(environments / live replicas); a replica over it gives back the excess,
 *   one under it takes free or expired leases up to it.
 * - The fence: a lease is surely this replica's until its renewal's *sending* time plus the
 *   lease less the margin, earlier than the database (expiry on its clock, counted from when
 *   the statement ran) lets anyone else take it.
 * - A renewal keeps a lease only when the table still gives it to this replica under the same
 *   fencing token.
 */
import type { HolderRow } from "./lease-table.js";

/** How many environments each of `live` replicas leads at most. */
export function shareOf(environments: number, live: number): number {
  return Math.ceil(environments / Math.max(1, live));
}

/** What a round does after renewing: give back the excess over the share, or take up to it. */
export function roundAction(held: number, share: number): { readonly give: number; readonly take: number } {
  return { give: Math.max(0, held - share), take: Math.max(0, share - held) };
}

/** The `n` leases given back to spread the fleet: of environments not applying now, the last by name. */
export function toGiveBack(held: Iterable<string>, busy: (environment: string) => boolean, n: number): string[] {
  if (n <= 0) return [];
  return [...held]
    .filter((e) => !busy(e))
    .sort()
    .slice(-n);
}

/** The local deadline of a lease renewed (or taken) by a statement sent at `sent`. */
export function leaseDeadline(sent: number, ttlMs: number, marginMs: number): number {
  return sent + ttlMs - marginMs;
}

/** Whether a renewal answered `kept` (the token the table still gives this replica, if any) keeps the lease held under `token`. */
export function renewalKeeps(token: number, kept: number | undefined): boolean {
  return kept === token;
}

/**
 * What is wrong with who leads what, from the lease table as read and this replica's own
 * leases: environments nobody leads, and those this replica leads while the table names
 * another live leader (two at once: never expected; said by /status).
 */
export function leadershipProblems(
  rows: readonly { readonly environment: string; readonly holder: string | null; readonly live: boolean }[],
  self: string,
  leadsHere: (environment: string) => boolean,
): { readonly leaderless: string[]; readonly ledTwice: string[] } {
  const leaderless: string[] = [];
  const ledTwice: string[] = [];
  for (const r of rows) {
    const mine = leadsHere(r.environment);
    if (!r.live && !mine) leaderless.push(r.environment);
    else if (r.live && mine && r.holder !== self) ledTwice.push(r.environment);
  }
  return { leaderless, ledTwice };
}

/**
 * When a standby should look again for leases to take: just after the first other replica's lease
 * runs out, when that comes before the next round (`renewMs`). A replica that died renews nothing;
 * waiting for the next round after its leases ran out added up to a round to every takeover. A
 * live peer renews its leases a round before they run out, so none of them wakes anyone.
 */
export function expiryWake(rows: readonly HolderRow[], me: string, renewMs: number): number | undefined {
  let first = Infinity;
  for (const r of rows) if (r.live && r.holder !== me && r.remainingMs !== undefined) first = Math.min(first, r.remainingMs);
  // a few ms past the expiry on the database's clock: the lease is free when the round reads it
  return first < renewMs ? first + 5 : undefined;
}
