/**
 * Abort signals that outlive a call (an apply's, the daemon's, a notifier's) keep nothing of
 * the calls made under them: listeners are removed when a call ends, and calls waiting in a
 * queue share one listener instead of one each (1,000 queued calls once added 1,000 listeners
 * and Node's MaxListenersExceededWarning).
 */
import { getEventListeners } from "node:events";
import { createServer } from "node:http";
import type { AddressInfo } from "node:net";
import { Agent } from "undici";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { linkedSignal } from "../../src/abort-signals.js";
import { InterfaceClient } from "../../src/apply/http-client.js";
import { InterfaceQueue } from "../../src/apply/pace/queues.js";
import { silentLogger } from "../../src/logger.js";
import { harness } from "../helpers/apply.js";

const server = createServer((req, res) => {
  req.resume();
  req.on("end", () => setTimeout(() => res.end('{"status":"ok"}'), 2));
});
const dispatcher = new Agent({ keepAliveTimeout: 10_000 });
let baseUrl = "";

beforeAll(async () => {
  await new Promise<void>((resolve) => server.listen(0, "127.0.0.1", resolve));
  baseUrl = `http://127.0.0.1:${(server.address() as AddressInfo).port}`;
});
afterAll(async () => {
  await dispatcher.close();
  await new Promise((resolve) => server.close(resolve));
});

const listeners = (signal: AbortSignal): number => getEventListeners(signal, "abort").length;

/** What Node keeps in a signal for each `AbortSignal.any` made from it (on Node 20: never pruned). */
function dependants(signal: AbortSignal): number {
  const key = Object.getOwnPropertySymbols(signal).find((s) => s.description === "kDependantSignals");
  return key === undefined ? 0 : ((signal as unknown as Record<symbol, Set<unknown> | undefined>)[key]?.size ?? 0);
}

describe("abort listeners", () => {
  it("calls queued under one signal, against a local server, add one listener to it while they wait and none once done", async () => {
    const queue = new InterfaceQueue("gateway", { concurrency: 2, requestsPerSecond: 10_000 }, silentLogger());
    const client = new InterfaceClient({
      name: "gateway",
      baseUrl,
      auth: { header: "x-key", value: "k" },
      dispatcher,
      timeoutMs: 5_000,
      maxResponseBytes: 1_000_000,
    });
    const halt = new AbortController();
    let most = 0;
    const calls = Array.from({ length: 200 }, async () => {
      most = Math.max(most, listeners(halt.signal));
      return queue.run(async () => client.call({ method: "GET", path: "/x" }), halt.signal);
    });
    const outcomes = await Promise.all(calls);
    most = Math.max(most, listeners(halt.signal));
    expect(outcomes.every((o) => o.kind === "answered" && o.status === 200)).toBe(true);
    expect(most).toBeLessThanOrEqual(1);
    expect(listeners(halt.signal)).toBe(0);
    expect(dependants(halt.signal)).toBe(0);
    queue.stop();
  });

  it("a signal linked to a long-lived one, once unlinked, leaves nothing on it — and still follows it while linked", () => {
    const daemon = new AbortController();
    for (let i = 0; i < 1_000; i++) linkedSignal([daemon.signal, new AbortController().signal]).unlink();
    expect(listeners(daemon.signal)).toBe(0);
    expect(dependants(daemon.signal)).toBe(0);
    const linked = linkedSignal([daemon.signal]);
    daemon.abort(new Error("shutting down"));
    expect(linked.signal.aborted).toBe(true);
    expect((linked.signal.reason as Error).message).toBe("shutting down");
    expect(listeners(daemon.signal)).toBe(0);
    expect(linkedSignal([daemon.signal]).signal.aborted).toBe(true);
  });

  it("an apply given a signal that outlives it (a daemon's) leaves no listener on it", async () => {
    const h = await harness();
    try {
      const daemon = new AbortController();
      for (let run = 0; run < 3; run++) await h.apply({ signal: daemon.signal });
      expect(listeners(daemon.signal)).toBe(0);
      expect(dependants(daemon.signal)).toBe(0);
    } finally {
      await h.stop();
    }
  }, 60_000);
});
