/**
 * The sandbox answers other calls while it works through a batch: each sub-request starts on a
 * turn of the event loop of its own (at most a few per turn), so a batch call arriving with
 * many sub-requests does not hold the portal, dashboard or LLM calls behind it until it is done.
 */
import { setImmediate as nextTurn } from "node:timers/promises";
import { afterEach, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { startSandbox } from "../../src/sandbox/sandbox.js";
import { Turns } from "../../src/sandbox/turns.js";
import { call } from "../helpers/sandbox.js";

const credentials = { gatewayKey: "t-gw", portalKey: "t-portal", dashboardToken: "t-dash", llmKey: "t-llm" };
let sb: SandboxHandle | undefined;
afterEach(async () => {
  await sb?.stop();
  sb = undefined;
});

describe("batch sub-requests, turn by turn", () => {
  it("a call that arrives while a batch is under way is answered before the batch is done", async () => {
    sb = await startSandbox({
      credentials,
      fixtures: {
        apis: [{ id: "gw-loopback", listenPath: "/gw-batch/", upstream: "${sandbox}/gw/", authentication: true, batchProcessing: true }],
        keys: [{ key: "lb", apis: ["gw-loopback"] }],
      },
    });
    const requests = Array.from({ length: 200 }, (_, i) => ({
      method: "POST",
      relative_url: `org/keys/k${i}`,
      headers: { "x-gw-authorization": credentials.gatewayKey, authorization: "lb" },
      body: JSON.stringify({ org_id: `o${i}`, rate: 1, per: 1 }),
    }));
    const done: string[] = [];
    const batch = call(`${sb.urls.gateway}/gw-batch/gw/batch/`, { method: "POST", body: { requests } }).then((r) => (done.push("batch"), r));
    // the batch is under way once its first sub-request reached the gateway
    while (!sb.inspect.calls().log.some((c) => c.internal)) await nextTurn();
    const direct = call(`${sb.urls.gateway}/gw/org/keys/direct`, {
      method: "POST",
      headers: { "x-gw-authorization": credentials.gatewayKey },
      body: { org_id: "o", rate: 1, per: 1 },
    }).then((r) => (done.push("direct"), r));
    const [b, c] = await Promise.all([batch, direct]);
    expect(b.status).toBe(200);
    expect((b.body as unknown[]).length).toBe(200);
    expect(c.status).toBe(200);
    expect(done).toEqual(["direct", "batch"]);
  });

  it("wakes waiters in the order they asked, a few per turn", async () => {
    const turns = new Turns(2);
    const woke: Array<[number, number]> = [];
    let turn = 0;
    const counting = (async () => {
      for (; turn < 10; turn++) await nextTurn();
    })();
    await Promise.all(Array.from({ length: 6 }, (_, i) => turns.next().then(() => woke.push([i, turn]))));
    await counting;
    expect(woke.map(([i]) => i)).toEqual([0, 1, 2, 3, 4, 5]);
    // two per turn: three different turns
    expect(new Set(woke.map(([, t]) => t)).size).toBe(3);
  });
});
