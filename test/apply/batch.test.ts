import { describe, expect, it } from "vitest";
import { chunk, relativeUrl } from "../../src/apply/batch.js";
import type { BatchItem } from "../../src/apply/batch.js";
import { backoffMs, judge } from "../../src/apply/retry.js";
import { parseRetryAfter } from "../../src/apply/http-client.js";

const item = (id: string, url: string, bytes = 10): BatchItem => ({ id, method: "POST", relativeUrl: url, body: "x".repeat(bytes) });

describe("batch chunking", () => {
  it("splits by count, by bytes, and never puts one relative_url twice in a batch", () => {
    const items = Array.from({ length: 120 }, (_, i) => item(`k${i}`, `org/keys/k${i}`));
    expect(chunk(items, 50).map((b) => b.length)).toEqual([50, 50, 20]);
    const big = Array.from({ length: 10 }, (_, i) => item(`a${i}`, `apis/oas/a${i}`, 200_000));
    expect(chunk(big, 50, 512 * 1024).map((b) => b.length)).toEqual([2, 2, 2, 2, 2]);
    expect(chunk([item("huge", "apis/oas/h", 2_000_000)], 50, 512 * 1024)).toHaveLength(1);
    const same = [item("a", "org/keys/x"), item("b", "org/keys/x"), item("c", "org/keys/y")];
    expect(chunk(same, 50).map((b) => b.map((i) => i.id))).toEqual([["a", "c"], ["b"]]);
  });

  it("addresses sub-requests below the loopback API's upstream", () => {
    expect(relativeUrl("/gw/apis/oas/p1?listenPath=%2Fp%2F")).toBe("apis/oas/p1?listenPath=%2Fp%2F");
  });
});

describe("retry policy", () => {
  const policy = { max: 3, baseDelayMs: 100, maxDelayMs: 1000 };
  const answered = (status: number, retryAfterMs?: number) => ({ kind: "answered" as const, status, retryAfterMs, body: undefined, text: "" });
  const describeAnswer = (): string => "m";

  it("backs off exponentially with full jitter, capped", () => {
    expect(backoffMs(policy, 0, () => 0.999)).toBe(99);
    expect(backoffMs(policy, 3, () => 0.5)).toBe(400);
    expect(backoffMs(policy, 10, () => 0.999)).toBe(999);
  });

  it("retries idempotent calls after 5xx and network failures, creates only when certainly not delivered", () => {
    expect(judge(answered(502), true, 0, policy, describeAnswer).kind).toBe("retry");
    expect(judge(answered(502), false, 0, policy, describeAnswer).kind).toBe("in-doubt");
    expect(judge({ kind: "unknown", error: "ECONNRESET" }, false, 0, policy, describeAnswer).kind).toBe("in-doubt");
    expect(judge({ kind: "not-sent", error: "ECONNREFUSED" }, false, 0, policy, describeAnswer).kind).toBe("retry");
    expect(judge(answered(503, 2000), false, 0, policy, describeAnswer)).toMatchObject({ kind: "retry", pause: true, delayMs: 2000 });
    expect(judge(answered(429, 1000), false, 0, policy, describeAnswer)).toMatchObject({ kind: "retry", pause: true, delayMs: 1000 });
    expect(judge(answered(422), false, 0, policy, describeAnswer)).toMatchObject({ kind: "failed", status: 422 });
    expect(judge(answered(500), true, 3, policy, describeAnswer).kind).toBe("failed");
    expect(judge(answered(201), false, 0, policy, describeAnswer).kind).toBe("success");
  });

  it("reads Retry-After in seconds or as a date", () => {
    expect(parseRetryAfter("2")).toBe(2000);
    expect(parseRetryAfter("0.5")).toBe(500);
    expect(parseRetryAfter(new Date(Date.now() + 3000).toUTCString(), Date.now())).toBeGreaterThan(1000);
    expect(parseRetryAfter("soon")).toBeUndefined();
    expect(parseRetryAfter(undefined)).toBeUndefined();
  });
});
