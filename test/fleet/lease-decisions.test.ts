/** What /status says of who leads what (src/fleet/lease-decisions.ts): environments led by nobody, and by this replica while the table names another. */
import { describe, expect, it } from "vitest";
import { expiryWake, leadershipProblems, roundAction, shareOf, toGiveBack } from "../../src/fleet/lease-decisions.js";

describe("the lease decisions", () => {
  it("finds environments nobody leads and those led twice", () => {
    const rows = [
      { environment: "a", holder: "me", live: true },
      { environment: "b", holder: null, live: false },
      { environment: "c", holder: "other", live: true },
      { environment: "d", holder: "other", live: false },
    ];
    const here = new Set(["a", "c", "d"]);
    expect(leadershipProblems(rows, "me", (e) => here.has(e))).toEqual({ leaderless: ["b"], ledTwice: ["c"] });
  });

  it("spreads to ceil(environments / replicas): the excess given back, idle ones last by name first", () => {
    expect(shareOf(10_000, 50)).toBe(200);
    expect(shareOf(7, 0)).toBe(7);
    expect(roundAction(5, 3)).toEqual({ give: 2, take: 0 });
    expect(roundAction(1, 3)).toEqual({ give: 0, take: 2 });
    expect(toGiveBack(["e1", "e3", "e2", "e4"], (e) => e === "e4", 2)).toEqual(["e2", "e3"]);
  });

  it("wakes a standby just after the first other replica's lease runs out before the next round, never for live peers or its own", () => {
    const row = (holder: string | null, remainingMs: number, live = true) => ({ environment: "e", holder, holderName: holder, token: 1, live, remainingMs });
    // a peer renewing every round: its leases have a lease less a round left at most
    expect(expiryWake([row("peer", 4_000), row("peer", 3_200)], "me", 1_000)).toBeUndefined();
    // a dead peer's leases run out within the round: the first of them, a few ms after
    expect(expiryWake([row("peer", 4_000), row("dead", 640), row("dead", 300)], "me", 1_000)).toBe(305);
    // its own leases, free ones, and rows read without the time left wake nobody
    expect(
      expiryWake([row("me", 10), row(null, 0, false), { environment: "e", holder: "dead", holderName: "dead", token: 1, live: true }], "me", 1_000),
    ).toBeUndefined();
  });
});
