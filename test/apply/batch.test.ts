import { describe, expect, it } from "vitest";
import { chunk, packBatches, relativeUrl } from "../../src/apply/batch/batch.js";
import type { BatchItem } from "../../src/apply/batch/batch.js";
import { backoffMs, judge } from "../../src/apply/pace/retry.js";
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

  it("packs items as batches are asked for: a wave's bodies are never all built at once", () => {
    let read = 0;
    const items = function* (): Generator<ReturnType<typeof item>> {
      for (let i = 0; i < 1000; i++) {
        read++;
        yield item(`k${i}`, `org/keys/k${i}`);
      }
    };
    const batches = packBatches(items(), 50);
    expect(batches.next().value).toHaveLength(50);
    expect(read).toBe(50);
    expect(batches.next().value).toHaveLength(50);
    expect(read).toBe(100);
    expect([...batches].map((b) => b.length)).toEqual(Array.from({ length: 18 }, () => 50));
  });

  it("keeps at most `window` batches open: the oldest leaves when another must open", () => {
    // each 300 kB: one per 512 kB batch, so every item opens a batch
    const big = Array.from({ length: 5 }, (_, i) => item(`a${i}`, `apis/oas/a${i}`, 300_000));
    const small = [item("s0", "org/keys/s0"), item("s1", "org/keys/s1")];
    const batches = [...packBatches([...big, ...small], 50, 512 * 1024, 2)].map((b) => b.map((i) => i.id));
    // a0..a2 left as a3, a4 opened; the small ones joined the open a3 and a4
    expect(batches).toEqual([["a0"], ["a1"], ["a2"], ["a3", "s0", "s1"], ["a4"]]);
    // duplicates of one relative_url never share a batch, within the window too
    const same = [item("a", "org/keys/x"), item("b", "org/keys/x"), item("c", "org/keys/x")];
    expect([...packBatches(same, 50, 512 * 1024, 1)].map((b) => b.map((i) => i.id))).toEqual([["a"], ["b"], ["c"]]);
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
