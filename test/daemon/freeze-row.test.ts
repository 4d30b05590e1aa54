/**
 * The worst bodies `POST /environments/NAME/freeze` and `/unfreeze` take (freeze-endpoint.ts):
 * what a client sends becomes a row every page, notification and refusal prints, so it is refused
 * by name when it is not a freeze, and kept bounded and without controls when it is.
 */
import { describe, expect, it } from "vitest";
import { stripControls } from "../../src/text/bounded-text.js";
import { freezeRowOf } from "../../src/daemon/http/freeze-endpoint.js";

const now = Date.parse("2026-12-02T12:00:00Z");
const freeze = (body: unknown): ReturnType<typeof freezeRowOf> => freezeRowOf(body, true, "GATESYNC_PROMOTE_TOKEN", now);

describe("a freeze's body", () => {
  it("that is not a freeze is refused by name", () => {
    expect(freeze([])).toBe("the body is a JSON object: { reason, until? }");
    expect(freeze(null)).toBe("the body is a JSON object: { reason, until? }");
    expect(freeze({ reason: 4521 })).toBe("reason is a text");
    expect(freeze({})).toMatch(/^a freeze needs a reason/);
    // controls alone are no reason: they are spaces, trimmed away
    expect(freeze({ reason: "\u001b\u0007\t \u202e" })).toMatch(/^a freeze needs a reason/);
    expect(freezeRowOf({ reason: "done", until: "2026-12-03T00:00:00Z" }, false, "T", now)).toBe("an unfreeze has no until");
  });

  it("with an until that is no ISO time, or not in the future, is refused", () => {
    // Date.parse reads "1" and "December 3" as times: only an ISO time is taken
    for (const until of ["1", "December 3, 2026", "2026-13-45T00:00:00Z", 1_800_000_000_000, ""])
      expect(freeze({ reason: "incident 4521", until })).toBe("until is an ISO time (2026-12-02T18:00:00Z)");
    expect(freeze({ reason: "incident 4521", until: "2026-12-02T11:59:59Z" })).toBe("until 2026-12-02T11:59:59.000Z is not in the future");
    expect(freeze({ reason: "incident 4521", until: "2026-12-02T12:00:00Z" })).toMatch(/is not in the future$/);
  });

  it("that is a freeze keeps its reason bounded and without controls, and its until as UTC", () => {
    const row = freeze({ reason: `incident\u001b]8;;http://x\u0007 4521 ${"x".repeat(5000)}`, until: "2026-12-02T19:00:00+01:00" });
    if (typeof row === "string") throw new Error(row);
    expect(stripControls(row.reason)).toBe(row.reason);
    expect(row.reason.startsWith("incident ]8;;http://x  4521 ")).toBe(true);
    expect(row.reason).toMatch(/… \(\d+ more characters\)$/);
    expect(row.reason.length).toBeLessThan(240);
    expect(row).toMatchObject({ kind: "freeze", frozen: true, until: "2026-12-02T18:00:00.000Z", by: "GATESYNC_PROMOTE_TOKEN" });
  });

  it("of an unfreeze without a reason says it was unfrozen", () => {
    expect(freezeRowOf({}, false, "T", now)).toMatchObject({ kind: "freeze", frozen: false, reason: "unfrozen", by: "T" });
  });
});
