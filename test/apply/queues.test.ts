/**
 * The interface queue: a pause holds every call that has not left yet — including one whose
 * intent was being written when the pause began — and a stopped apply starts nothing new.
 */
import { describe, expect, it } from "vitest";
import { InterfaceQueue, NotStarted } from "../../src/apply/pace/queues.js";
import { silentLogger } from "../../src/logger.js";

const rate = { concurrency: 4, requestsPerSecond: 1000 };

describe("interface queue", () => {
  it("holds a call whose preparation was under way when a Retry-After pause began", async () => {
    const q = new InterfaceQueue("gateway", rate, silentLogger());
    let pausedAt = 0;
    let sentAt = 0;
    await q.run(
      async () => {
        sentAt = performance.now();
        return Promise.resolve();
      },
      undefined,
      async () => {
        // another call's 429 arrives while this one's intent is being written
        pausedAt = performance.now();
        q.pause(300);
        return Promise.resolve();
      },
    );
    expect(pausedAt).toBeGreaterThan(0);
    expect(sentAt - pausedAt).toBeGreaterThanOrEqual(295);
    expect(q.started).toBe(1);
    q.stop();
  });

  it("starts nothing once stopped, but sends a call whose intent is already written", async () => {
    const q = new InterfaceQueue("portal", rate, silentLogger());
    const stop = new AbortController();
    stop.abort();
    await expect(q.run(async () => Promise.resolve("sent"), stop.signal)).rejects.toBeInstanceOf(NotStarted);
    const late = new AbortController();
    const sent = await q.run(
      async () => Promise.resolve("sent"),
      late.signal,
      async () => {
        late.abort();
        return Promise.resolve();
      },
    );
    expect(sent).toBe("sent");
    expect(q.started).toBe(1);
    q.stop();
  });
});
