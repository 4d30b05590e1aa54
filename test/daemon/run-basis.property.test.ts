/**
 * The daemon's skip decision as a property (run-basis.ts): a run is skipped exactly when the
 * revision, the settings (the operator's and the commit's team settings) and the state's lineage and serial are all what the last good run
 * left; a state whose version cannot be read is never "unchanged".
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { changeSince } from "../../src/daemon/loop/run-basis.js";
import type { StateBackend, StateVersion } from "../../src/record/state.js";

const versionOnly = (read: () => Promise<StateVersion>): StateBackend => ({ readVersion: read }) as unknown as StateBackend;
const basis = fc.record({
  revision: fc.constantFrom("a1", "b2"),
  configHash: fc.constantFrom("h1", "h2"),
  teamHash: fc.constantFrom("t1", "t2"),
  state: fc.record({ lineage: fc.constantFrom("", "L1", "L2"), serial: fc.integer({ min: 0, max: 3 }) }),
});

describe("changeSince", () => {
  it("is undefined exactly when revision, settings, lineage and serial all match; else names the first that differs", async () => {
    await fc.assert(
      fc.asyncProperty(basis, basis, async (last, now) => {
        const change = await changeSince(
          last,
          now,
          versionOnly(() => Promise.resolve(now.state)),
        );
        const expected =
          last.revision !== now.revision
            ? "revision"
            : last.configHash !== now.configHash || last.teamHash !== now.teamHash
              ? "settings"
              : last.state.lineage !== now.state.lineage || last.state.serial !== now.state.serial
                ? "state"
                : undefined;
        expect(change).toBe(expected);
      }),
    );
  });

  it("counts a state it cannot read as changed (the run then meets the error)", async () => {
    const last = { revision: "a", configHash: "h", teamHash: "t", state: { lineage: "L", serial: 3 } };
    expect(
      await changeSince(
        last,
        last,
        versionOnly(() => Promise.reject(new Error("gone"))),
      ),
    ).toBe("state");
  });
});
