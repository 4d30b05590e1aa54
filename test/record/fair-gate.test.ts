/**
 * The shared pool's gate (src/record/postgres/fair-gate.ts): first come first served among those
 * that may go, one user never holding more than its share, the state locks never holding the
 * last place, and a wait past its deadline refused.
 */
import { describe, expect, it } from "vitest";
import { FairGate } from "../../src/record/postgres/fair-gate.js";

const never = (): Error => new Error("timed out");

describe("the shared pool's gate", () => {
  it("hands places out in arrival order", async () => {
    const gate = new FairGate(2, 2);
    const first = await gate.enter("a", "read", 1_000, never);
    const second = await gate.enter("b", "read", 1_000, never);
    const order: string[] = [];
    const waiting = ["c", "d", "e"].map(async (u) => {
      const leave = await gate.enter(u, "read", 1_000, never);
      order.push(u);
      return leave;
    });
    first();
    second();
    const leaves = await Promise.all(waiting.slice(0, 2));
    leaves[0]!();
    (await waiting[2]!)();
    leaves[1]!();
    expect(order).toEqual(["c", "d", "e"]);
    expect(gate.counts()).toEqual({ inUse: 0, locks: 0, waiting: 0 });
  });

  it("keeps one busy user to its share: another user's later request goes first", async () => {
    const gate = new FairGate(4);
    expect(gate.share).toBe(2);
    const busy = await Promise.all([gate.enter("busy", "read", 1_000, never), gate.enter("busy", "read", 1_000, never)]);
    const order: string[] = [];
    const third = gate.enter("busy", "read", 1_000, never).then((l) => (order.push("busy"), l));
    const other = gate.enter("quiet", "read", 1_000, never).then((l) => (order.push("quiet"), l));
    (await other)();
    expect(order).toEqual(["quiet"]);
    expect(gate.counts()).toMatchObject({ inUse: 2, waiting: 1 });
    busy[0]();
    (await third)();
    busy[1]();
    expect(order).toEqual(["quiet", "busy"]);
  });

  it("never gives the last place to a state lock: a read always finds one", async () => {
    const gate = new FairGate(3);
    const locks = await Promise.all([gate.enter("a", "lock", 1_000, never), gate.enter("b", "lock", 1_000, never)]);
    await expect(gate.enter("c", "lock", 50, (c) => new Error(`lock waited: ${c.locks} locks`))).rejects.toThrow("lock waited: 2 locks");
    const read = await gate.enter("a", "read", 50, never);
    read();
    for (const l of locks) l();
  });

  it("refuses a wait past its deadline, and forgets it (a later place is not given to it)", async () => {
    const gate = new FairGate(2, 2);
    const held = await Promise.all([gate.enter("a", "read", 1_000, never), gate.enter("a", "read", 1_000, never)]);
    const t0 = performance.now();
    await expect(gate.enter("b", "read", 100, (c) => new Error(`in use ${c.inUse}, waiting ${c.waiting}`))).rejects.toThrow("in use 2, waiting 0");
    expect(performance.now() - t0).toBeGreaterThanOrEqual(90);
    held[0]();
    expect(gate.counts()).toEqual({ inUse: 1, locks: 0, waiting: 0 });
    held[1]();
  });

  it("refuses a pool of one connection (the locks would take the only one)", () => {
    expect(() => new FairGate(1)).toThrow(RangeError);
  });
});
