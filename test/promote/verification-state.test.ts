/**
 * The pure rules behind "verification is a state" and "the gate judges what the target will
 * get" (src/promote): a withdrawal takes a verification back until a later grant; a failing run
 * withdraws only a standing verification of its own revision; the selection gate names what the
 * source left out, at most ten of them.
 */
import { describe, expect, it } from "vitest";
import { selectionRefusal } from "../../src/promotion/gates.js";
import { standingOf, withdrawalDue, withdrawalsOf } from "../../src/promotion/verification.js";
import type { RunFact } from "../../src/promotion/verification.js";

const run = (revision: string, verdict: RunFact["verdict"], at: number, problem?: string): RunFact => ({
  revision,
  firstAt: at,
  lastAt: at,
  verdict,
  ...(problem === undefined ? {} : { problem }),
});

describe("verification as a state", () => {
  it("a withdrawal takes a verification back until a later grant of the same revision", () => {
    const rows = [
      { revision: "b", at: 40 },
      { revision: "a", at: 30, withdrawn: "post-apply check failed: …" },
      { revision: "a", at: 10 },
    ];
    expect(standingOf(rows).map((v) => v.revision)).toEqual(["b"]);
    expect(withdrawalsOf(rows).map((v) => v.revision)).toEqual(["a"]);
    expect(standingOf([{ revision: "a", at: 50 }, ...rows]).map((v) => v.revision)).toEqual(["a", "b"]);
    expect(withdrawalsOf([{ revision: "a", at: 50 }, ...rows])).toEqual([]);
  });

  it("a failing run withdraws its own revision's standing verification, and nothing else", () => {
    const granted = [{ revision: "a", at: 10 }];
    expect(withdrawalDue([run("a", "failed", 20, "1 failed, 0 in doubt, 0 blocked")], granted)).toEqual({
      revision: "a",
      reason: "1 failed, 0 in doubt, 0 blocked",
    });
    // another revision failing does not take back a's verification
    expect(withdrawalDue([run("b", "failed", 20)], granted)).toBeUndefined();
    // a run that says nothing is passed over: the failing run behind it counts
    expect(withdrawalDue([{ ...run("a", "neutral", 30) }, run("a", "failed", 20, "x")], granted)?.revision).toBe("a");
    // a healthy newest run, or a verification already withdrawn: nothing to do
    expect(withdrawalDue([run("a", "ok", 20)], granted)).toBeUndefined();
    expect(withdrawalDue([run("a", "failed", 20)], [{ revision: "a", at: 15, withdrawn: "x" }, ...granted])).toBeUndefined();
    // a failure older than the grant is not a later run
    expect(withdrawalDue([run("a", "failed", 5)], granted)).toBeUndefined();
  });
});

describe("the gate on the target's plan", () => {
  const source = { judged: new Set(["OrgKey/globex", "OrgKey/gone"]), applied: new Set(["OrgKey/globex"]), failing: new Map<string, string>() };
  const rev = "0123456789abcdef0123456789abcdef01234567";

  it("names what was outside the source's selection; an orphan in it passes", () => {
    expect(selectionRefusal(rev, "staging", [{ id: "OrgKey/globex", orphan: false }], source)).toBeUndefined();
    expect(selectionRefusal(rev, "staging", [{ id: "OrgKey/gone", orphan: true }], source)).toBeUndefined();
    expect(selectionRefusal(rev, "staging", [{ id: "OrgKey/acme", orphan: false }], source)).toBe(
      "OrgKey/acme was outside staging's selection at 0123456789ab (staging did not apply and check what 0123456789ab changes here)",
    );
    expect(selectionRefusal(rev, "staging", [{ id: "OrgKey/gone", orphan: false }], source)).toContain("OrgKey/gone was not applied in staging");
    const failing = { ...source, failing: new Map([["OrgKey/globex", "GET pets: expected 200, got 502"]]) };
    expect(selectionRefusal(rev, "staging", [{ id: "OrgKey/globex", orphan: false }], failing)).toContain(
      "OrgKey/globex's post-apply check fails in staging: GET pets: expected 200, got 502",
    );
  });

  it("names at most ten and counts the rest", () => {
    const many = Array.from({ length: 13 }, (_, i) => ({ id: `OrgKey/k${i}`, orphan: false }));
    const text = selectionRefusal(rev, "staging", many, source)!;
    expect(text.match(/was outside/g)).toHaveLength(10);
    expect(text).toContain("; and 3 more (staging did not apply");
  });
});
