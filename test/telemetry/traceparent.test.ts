/** The trace context gatesync keeps from a client or a peer (W3C Trace Context, level 1): its form, and its bound. */
import { describe, expect, it } from "vitest";
import { validTraceparent } from "../../src/telemetry/traceparent.js";

const traceId = "4bf92f3577b34da6a3ce929d0e0e4736";
const parentId = "00f067aa0ba902b7";

describe("validTraceparent", () => {
  it("keeps a version-00 trace context as it is, and a later version's first four fields", () => {
    expect(validTraceparent(`00-${traceId}-${parentId}-01`)).toBe(`00-${traceId}-${parentId}-01`);
    expect(validTraceparent(`00-${traceId}-${parentId}-00`)).toBe(`00-${traceId}-${parentId}-00`);
    expect(validTraceparent(`01-${traceId}-${parentId}-01-${"a".repeat(300)}`)).toBe(`01-${traceId}-${parentId}-01`);
  });

  it.each([
    ["not a string", ["00", traceId]],
    ["absent", undefined],
    ["empty", ""],
    ["version 00 with more fields", `00-${traceId}-${parentId}-01-extra`],
    ["version ff", `ff-${traceId}-${parentId}-01`],
    ["an all-zero trace id", `00-${"0".repeat(32)}-${parentId}-01`],
    ["an all-zero parent id", `00-${traceId}-${"0".repeat(16)}-01`],
    ["upper-case hex", `00-${traceId.toUpperCase()}-${parentId}-01`],
    ["a short trace id", `00-${traceId.slice(1)}-${parentId}-01`],
    ["4 KiB of garbage", `00-${"z".repeat(32)}-${"x".repeat(4_000)}-01`],
    ["a later version, over the length read", `01-${traceId}-${parentId}-01-${"a".repeat(600)}`],
  ])("drops %s", (_what, value) => {
    expect(validTraceparent(value)).toBeUndefined();
  });
});
