/**
 * The places among the environments' runs (src/daemon/environments/run-slots.ts): a run of an
 * environment just taken over goes before the backlog waiting, the bound holds, and a standby's
 * turn takes no place.
 */
import { describe, expect, it } from "vitest";
import { RunSlots } from "../../src/daemon/environments/run-slots.js";

function deferred<T>(): { promise: Promise<T>; resolve: (v: T) => void } {
  let resolve: (v: T) => void = () => undefined;
  const promise = new Promise<T>((r) => (resolve = r));
  return { promise, resolve };
}

describe("the places among the environments' runs", () => {
  it("runs a taken-over environment's run before the runs waiting, never more than the bound at once", async () => {
    const slots = new RunSlots(2);
    const started: string[] = [];
    let atOnce = 0;
    let most = 0;
    const gates = new Map<string, ReturnType<typeof deferred<void>>>();
    const run = (e: string): Promise<void> =>
      slots.run(e, async () => {
        started.push(e);
        most = Math.max(most, ++atOnce);
        const gate = deferred<void>();
        gates.set(e, gate);
        await gate.promise;
        atOnce--;
      });
    const done = ["a", "b", "c", "d", "e", "f"].map(run);
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(["a", "b"]);
    expect(slots.queued).toBe(4);
    // f's leader died: this replica took its lease, and its run waits at the end of the backlog
    slots.tookOver("f");
    gates.get("a")!.resolve(undefined);
    await new Promise((r) => setImmediate(r));
    expect(started).toEqual(["a", "b", "f"]);
    for (const e of ["b", "f", "c", "d", "e"]) {
      gates.get(e)!.resolve(undefined);
      await new Promise((r) => setImmediate(r));
    }
    await Promise.all(done);
    expect(started).toEqual(["a", "b", "f", "c", "d", "e"]);
    expect(most).toBe(2);
  });

  it("runs a standby's turn at once, beside a full set of places", async () => {
    const slots = new RunSlots(1);
    const hold = deferred<void>();
    const busy = slots.run("a", () => hold.promise);
    await new Promise((r) => setImmediate(r));
    await expect(slots.run("b", () => Promise.resolve("standby"), true)).resolves.toBe("standby");
    hold.resolve(undefined);
    await busy;
  });
});
