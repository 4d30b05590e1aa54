/**
 * The lease protocol at a scale no machine here runs: 10,000 environments over 50 replicas, as a
 * pure state machine. The replicas decide with the functions the real leases call
 * (src/fleet/lease-decisions.ts: the share, what to give back, the local deadline, whether a
 * renewal kept a lease); the simulated database answers as lease-table.ts's SQL does, on its own
 * clock (a lease is taken only when free or expired; a renewal names holder and token; replicas
 * seen within a lease are live). fast-check chooses crashes, pauses (a frozen VM, longer than a
 * lease), answers lost after the statement ran, and lost `released` notifications. Checked at
 * every step: no environment has two replicas that each believe they lead it; after the last
 * fault, every environment is led again within a lease plus two renewals; and the shares converge
 * to at most ceil(environments / live replicas).
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { leaseDeadline, renewalKeeps, roundAction, shareOf, toGiveBack } from "../../src/fleet/lease-decisions.js";
import { leaseTiming } from "../../src/fleet/lease-session.js";

const ttl = 5_000;
const renew = 1_000;
const { marginMs } = leaseTiming(ttl, renew);
const step = 250;

type Fault =
  | { readonly kind: "crash"; readonly replica: number; readonly at: number }
  | { readonly kind: "pause"; readonly replica: number; readonly at: number; readonly forMs: number }
  | { readonly kind: "lostAnswer"; readonly replica: number; readonly at: number }
  | { readonly kind: "lostNotify"; readonly replica: number; readonly at: number };

interface Replica {
  readonly id: number;
  readonly phase: number;
  dead: boolean;
  pausedUntil: number;
  nextTick: number;
  /** environment → token and local deadline. */
  readonly held: Map<number, { token: number; deadline: number }>;
}

/** The lease table, as lease-table.ts's SQL treats it. */
class Table {
  readonly holder: Int32Array;
  readonly token: Int32Array;
  readonly expires: Float64Array;
  readonly seen = new Map<number, number>();
  constructor(readonly n: number) {
    this.holder = new Int32Array(n).fill(-1);
    this.token = new Int32Array(n);
    this.expires = new Float64Array(n).fill(Number.NEGATIVE_INFINITY);
  }
  heartbeat(id: number, now: number): number {
    this.seen.set(id, now);
    return [...this.seen.values()].filter((t) => t > now - ttl).length;
  }
  renew(id: number, held: ReadonlyMap<number, { token: number }>, now: number): Map<number, number> {
    const kept = new Map<number, number>();
    for (const [e, h] of held)
      if (this.holder[e] === id && this.token[e] === h.token && this.expires[e]! > now) {
        this.expires[e] = now + ttl;
        kept.set(e, h.token);
      }
    return kept;
  }
  releaseStray(id: number, held: ReadonlyMap<number, { token: number }>): void {
    for (let e = 0; e < this.n; e++) if (this.holder[e] === id && held.get(e)?.token !== this.token[e]) this.free(e);
  }
  free(e: number): void {
    this.holder[e] = -1;
    this.expires[e] = Number.NEGATIVE_INFINITY;
  }
  acquire(e: number, id: number, now: number): number | undefined {
    if (this.holder[e] !== -1 && this.expires[e]! > now) return undefined;
    this.holder[e] = id;
    this.token[e] = this.token[e]! + 1;
    this.expires[e] = now + ttl;
    return this.token[e];
  }
  live(e: number, now: number): boolean {
    return this.holder[e] !== -1 && this.expires[e]! > now;
  }
}

interface Outcome {
  readonly doubles: number;
  readonly unledAfterBound: number;
  readonly maxHeld: number;
  readonly share: number;
}

/** Runs the fleet until `endMs` with `faults`; a seeded order of free leases stands for freeLeases' shuffle. */
function simulate(envs: number, replicas: number, faults: readonly Fault[], endMs: number, seed: number): Outcome {
  const table = new Table(envs);
  let rnd = seed >>> 0 || 1;
  const random = (): number => (rnd = (rnd * 1103515245 + 12345) >>> 0) / 2 ** 32;
  const fleet: Replica[] = Array.from({ length: replicas }, (_, id) => {
    const phase = Math.floor(random() * (renew / step)) * step;
    return { id, phase, dead: false, pausedUntil: 0, nextTick: phase, held: new Map() };
  });
  const lastFault = Math.max(0, ...faults.map((f) => f.at + (f.kind === "pause" ? f.forMs : 0)));
  const bound = lastFault + ttl + 2 * renew + step;
  let doubles = 0;
  let unledAfterBound = 0;
  const leads = (r: Replica, e: number, now: number): boolean => !r.dead && (r.held.get(e)?.deadline ?? -1) > now;
  for (let now = 0; now <= endMs; now += step) {
    for (const f of faults) {
      if (f.at !== now) continue;
      const r = fleet[f.replica]!;
      if (f.kind === "crash") r.dead = true;
      if (f.kind === "pause") r.pausedUntil = now + f.forMs;
    }
    let wake = false;
    for (const r of fleet) {
      if (r.dead || now < r.pausedUntil || now < r.nextTick) continue;
      const lostAnswer = faults.some((f) => f.kind === "lostAnswer" && f.replica === r.id && f.at === now);
      const notifyLost = faults.some((f) => f.kind === "lostNotify" && f.at === now);
      wake = tick(r, table, envs, now, lostAnswer, random) && !notifyLost ? true : wake;
      r.nextTick = now + renew;
    }
    // a `released` heard wakes the others: their next round comes now (leases.ts's wake)
    if (wake) for (const r of fleet) if (!r.dead) r.nextTick = Math.min(r.nextTick, now + step);
    for (let e = 0; e < envs; e++) {
      let n = 0;
      for (const r of fleet) if (leads(r, e, now)) n++;
      if (n > 1) doubles++;
      if (now > bound && !table.live(e, now)) unledAfterBound++;
    }
  }
  const live = fleet.filter((r) => !r.dead).length;
  return { doubles, unledAfterBound, maxHeld: Math.max(...fleet.filter((r) => !r.dead).map((r) => r.held.size)), share: shareOf(envs, live) };
}

/** One round of a replica (leases.ts's tick): alive, renew, give back the excess or take up to the share. True when it gave some back. */
function tick(r: Replica, table: Table, envs: number, now: number, lostAnswer: boolean, random: () => number): boolean {
  for (const [e, h] of r.held) if (now >= h.deadline) r.held.delete(e);
  const live = table.heartbeat(r.id, now);
  table.releaseStray(r.id, r.held);
  const sent = now - step / 2;
  const kept = table.renew(r.id, r.held, now);
  // the statement ran, its answer never came: the replica renews nothing here and drops the connection
  if (lostAnswer) return false;
  for (const [e, h] of r.held) {
    if (renewalKeeps(h.token, kept.get(e))) h.deadline = leaseDeadline(sent, ttl, marginMs);
    else r.held.delete(e);
  }
  const { give, take } = roundAction(r.held.size, shareOf(envs, live));
  if (give > 0) {
    for (const e of toGiveBack([...r.held.keys()].map(String), () => false, give)) {
      r.held.delete(Number(e));
      table.free(Number(e));
    }
    return true;
  }
  let wanted = take;
  const start = Math.floor(random() * envs);
  for (let i = 0; i < envs && wanted > 0; i++) {
    const e = (start + i) % envs;
    if (table.live(e, now)) continue;
    const token = table.acquire(e, r.id, now);
    if (token === undefined) continue;
    r.held.set(e, { token, deadline: leaseDeadline(sent, ttl, marginMs) });
    wanted--;
  }
  return false;
}

const faultOf = (replicas: number, horizon: number): fc.Arbitrary<Fault> => {
  const at = fc.integer({ min: 1, max: horizon / step }).map((k) => k * step);
  const replica = fc.integer({ min: 0, max: replicas - 1 });
  return fc.oneof(
    fc.record({ kind: fc.constant("crash" as const), replica, at }),
    fc.record({ kind: fc.constant("pause" as const), replica, at, forMs: fc.integer({ min: 1, max: (3 * ttl) / step }).map((k) => k * step) }),
    fc.record({ kind: fc.constant("lostAnswer" as const), replica, at }),
    fc.record({ kind: fc.constant("lostNotify" as const), replica, at }),
  );
};

/** The checks of one run: none led twice, all led again within the bound, shares at most ceil(envs / live). */
function check(envs: number, replicas: number, faults: readonly Fault[], seed: number, endMs: number): void {
  const crashes = new Set(faults.filter((f) => f.kind === "crash").map((f) => f.replica));
  if (crashes.size >= replicas) return;
  const o = simulate(envs, replicas, faults, endMs, seed);
  expect(o.doubles).toBe(0);
  expect(o.unledAfterBound).toBe(0);
  expect(o.maxHeld).toBeLessThanOrEqual(o.share);
}

describe("the lease protocol as a state machine", () => {
  it("never leads an environment twice, leads every one again within a lease and two renewals, and spreads them (small fleets, many runs)", () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 40 }),
        fc.integer({ min: 2, max: 6 }),
        fc.array(faultOf(6, 20_000), { maxLength: 8 }),
        fc.integer(),
        (envs, replicas, faults, seed) => {
          const mine = faults.filter((f) => f.replica < replicas);
          const last = Math.max(0, ...mine.map((f) => f.at + (f.kind === "pause" ? f.forMs : 0)));
          check(envs, replicas, mine, seed, last + 3 * ttl);
        },
      ),
      { numRuns: 150 },
    );
  });

  it("holds at 10,000 environments over 50 replicas", () => {
    fc.assert(
      fc.property(fc.array(faultOf(50, 12_000), { minLength: 1, maxLength: 6 }), fc.integer(), (faults, seed) => {
        const last = Math.max(0, ...faults.map((f) => f.at + (f.kind === "pause" ? f.forMs : 0)));
        check(10_000, 50, faults, seed, last + ttl + 4 * renew);
      }),
      { numRuns: 2 },
    );
  }, 120_000);
});
