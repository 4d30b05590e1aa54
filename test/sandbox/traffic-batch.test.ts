/** API traffic and operation 4 (batch) over real HTTP, with a local upstream. */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { startSandbox } from "../../src/sandbox/sandbox.js";
import type { Receiver } from "../helpers/receiver.js";
import { startReceiver } from "../helpers/receiver.js";
import { call, exampleFixtures, gw, testCredentials } from "../helpers/sandbox.js";

let sb: SandboxHandle;
let upstream: Receiver;

const ordersDoc = {
  openapi: "3.1.0",
  info: { title: "Orders", version: "1" },
  paths: {
    "/orders/{id}": {
      get: {
        parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }],
        responses: { "200": { description: "one", content: { "application/json": { example: { id: "o-1", total: 3 } } } } },
      },
    },
    "/health": { get: { responses: { "204": { description: "ok" } } } },
  },
};

beforeAll(async () => {
  upstream = await startReceiver();
  sb = await startSandbox({
    credentials: testCredentials,
    fixtures: await exampleFixtures({
      apis: [
        { id: "echo", listenPath: "/echo/", upstream: upstream.url, batchProcessing: true },
        { id: "echo-nostrip", listenPath: "/keep/", upstream: upstream.url, strip: false },
        { id: "locked", listenPath: "/locked/", upstream: upstream.url, authentication: true, batchProcessing: true },
        { id: "off", listenPath: "/off/", upstream: upstream.url, active: false },
        { id: "mocked", listenPath: "/mocked/", upstream: upstream.url, mockResponse: true, document: ordersDoc },
      ],
      keys: [{ key: "locked-key", apis: ["locked"] }],
    }),
  });
});
afterAll(async () => {
  await sb.stop();
  await upstream.stop();
});
beforeEach(() => {
  sb.inspect.reset();
  sb.inspect.setFaults({ resetRate: 0, errorRate: 0, lostResponseRate: 0, rateLimit: undefined, latencyMs: 0, scope: "all" });
  upstream.received.length = 0;
});

describe("API traffic", () => {
  it("strips the listen path and proxies to the upstream, or keeps it when strip is off", async () => {
    const r = await call(`${sb.urls.base}/echo/pets/1?x=2`, { headers: { "x-custom": "v" } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ method: "GET", url: "/pets/1?x=2" });
    expect(r.headers["x-upstream"]).toBe("receiver");
    expect(upstream.received[0]!.headers["x-custom"]).toBe("v");
    const kept = await call(`${sb.urls.base}/keep/pets`, { method: "POST", body: "hello" });
    expect(kept.body).toMatchObject({ method: "POST", url: "/keep/pets", body: "hello" });
  });

  it("refuses inactive APIs, unknown paths, and checks authentication against the keys", async () => {
    expect((await call(`${sb.urls.base}/off/x`)).status).toBe(404);
    expect((await call(`${sb.urls.base}/nowhere`)).status).toBe(404);
    expect(await call(`${sb.urls.base}/locked/x`)).toMatchObject({ status: 401, body: { error: "Authorization field missing" } });
    expect(await call(`${sb.urls.base}/locked/x`, { headers: { authorization: "sandbox-orders-key" } })).toMatchObject({ status: 403 });
    expect((await call(`${sb.urls.base}/locked/x`, { headers: { authorization: "locked-key" } })).status).toBe(200);
    expect(upstream.received).toHaveLength(1);
  });

  it("answers from the document's examples when mock responses are on", async () => {
    expect(await call(`${sb.urls.base}/mocked/orders/42`)).toMatchObject({ status: 200, body: { id: "o-1", total: 3 } });
    expect((await call(`${sb.urls.base}/mocked/health`)).status).toBe(204);
    expect(upstream.received).toHaveLength(0);
    // an endpoint the document does not have goes to the upstream
    expect((await call(`${sb.urls.base}/mocked/other`)).status).toBe(200);
    expect(upstream.received).toHaveLength(1);
  });

  it("turns mock responses on through operation 1's flag", async () => {
    await call(`${sb.urls.gateway}/gw/apis/oas/echo?mockResponse=true`, {
      method: "PATCH",
      headers: gw,
      body: { ...ordersDoc, servers: [{ url: upstream.url }] },
    });
    expect(await call(`${sb.urls.base}/echo/orders/1`)).toMatchObject({ status: 200, body: { id: "o-1" } });
  });
});

describe("operation 4: batch", () => {
  const batch = (listenPath: string, body: unknown): ReturnType<typeof call> =>
    call(`${sb.urls.base}${listenPath}gw/batch/`, { method: "POST", body: body as object });

  it("runs sub-requests in parallel and answers in completion order", async () => {
    const r = await batch("/echo/", {
      requests: [
        { method: "GET", relative_url: "slow?delay=300", headers: {} },
        { method: "POST", relative_url: "fast", headers: { "content-type": "text/plain" }, body: "b" },
      ],
    });
    expect(r.status).toBe(200);
    const items = r.body as Array<{ relative_url: string; code: number; headers: Record<string, string[]>; body: string }>;
    expect(items.map((i) => i.relative_url)).toEqual(["fast", "slow?delay=300"]);
    expect(items[0]).toMatchObject({ code: 200, headers: { "X-Upstream": ["receiver"], "Content-Type": ["application/json"] } });
    expect(JSON.parse(items[0]!.body)).toMatchObject({ method: "POST", url: "/fast", body: "b" });
  });

  it("runs them one after another, in array order, with suppress_parallel_execution", async () => {
    const r = await batch("/echo/", {
      suppress_parallel_execution: true,
      requests: [
        { method: "GET", relative_url: "slow?delay=200" },
        { method: "GET", relative_url: "fast" },
      ],
    });
    expect((r.body as Array<{ relative_url: string }>).map((i) => i.relative_url)).toEqual(["slow?delay=200", "fast"]);
    expect(upstream.received.map((x) => x.url)).toEqual(["/slow?delay=200", "/fast"]);
  });

  it("authorises every sub-request on its own, and sends only its own headers", async () => {
    const r = await batch("/locked/", {
      requests: [
        { method: "GET", relative_url: "a", headers: { authorization: "locked-key" } },
        { method: "GET", relative_url: "b", headers: { authorization: "wrong" } },
        { method: "GET", relative_url: "c" },
      ],
    });
    const byUrl = Object.fromEntries((r.body as Array<{ relative_url: string; code: number }>).map((i) => [i.relative_url, i.code]));
    expect(byUrl).toEqual({ a: 200, b: 403, c: 401 });
    expect(upstream.received).toHaveLength(1);
    expect(upstream.received[0]!.headers["x-sandbox-internal"]).toBeUndefined();
  });

  it("carries management calls through the loopback API", async () => {
    const r = await batch("/gw-batch/", {
      requests: [1, 2, 3].map((i) => ({
        method: "POST",
        relative_url: `org/keys/org-${i}?reset_quota=1`,
        headers: { authorization: "sandbox-loopback-key", "x-gw-authorization": testCredentials.gatewayKey },
        body: JSON.stringify({ rate: i }),
      })),
    });
    const items = r.body as Array<{ relative_url: string; code: number; body: string }>;
    expect(items).toHaveLength(3);
    for (const item of items) expect(item.code).toBe(200);
    expect(
      items
        .map((i) => JSON.parse(i.body) as { key: string })
        .map((b) => b.key)
        .sort(),
    ).toEqual(["org-1", "org-2", "org-3"]);
    expect(sb.inspect.store.orgKeys.get("org-2")).toMatchObject({ quotaResets: 1, session: { rate: 2 } });
    const calls = sb.inspect.calls();
    expect(calls.counts.batch?.total).toBe(1);
    expect(calls.counts.upsertOrgKey?.total).toBe(3);
    expect(calls.log.filter((c) => c.operation === "upsertOrgKey").every((c) => c.internal)).toBe(true);
  });

  it("reports a management error of a sub-request as its code", async () => {
    const r = await batch("/gw-batch/", {
      requests: [
        {
          method: "PATCH",
          relative_url: "apis/oas/ghost",
          headers: { authorization: "sandbox-loopback-key", "x-gw-authorization": testCredentials.gatewayKey },
          body: JSON.stringify({ openapi: "3.1.0", info: { title: "t", version: "1" }, paths: {} }),
        },
      ],
    });
    const [item] = r.body as Array<{ code: number; body: string }>;
    expect(item!.code).toBe(404);
    expect(JSON.parse(item!.body)).toEqual({ status: "error", message: "API not found" });
  });

  it("answers an empty item with code 0 for a sub-request that fails below HTTP", async () => {
    sb.inspect.setFaults({ resetRate: 1, scope: "internal", interfaces: ["gateway"] });
    const r = await batch("/gw-batch/", {
      requests: ["a", "b"].map((k) => ({
        method: "POST",
        relative_url: `org/keys/${k}`,
        headers: { authorization: "sandbox-loopback-key", "x-gw-authorization": testCredentials.gatewayKey },
        body: "{}",
      })),
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual([
      { relative_url: "", code: 0, headers: null, body: "" },
      { relative_url: "", code: 0, headers: null, body: "" },
    ]);
  });

  it("decodes strictly: a non-string body or header value is a malformed batch", async () => {
    for (const bad of [
      { requests: [{ method: "POST", relative_url: "x", body: { a: 1 } }] },
      { requests: [{ method: "GET", relative_url: "x", headers: { n: 1 } }] },
      { requests: "nope" },
      { requests: [], suppress_parallel_execution: "yes" },
    ]) {
      expect(await batch("/echo/", bad)).toMatchObject({ status: 400, body: { status: "error", message: "Batch request malformed" } });
    }
    expect(await batch("/echo/", "not json")).toMatchObject({ status: 400 });
    expect(upstream.received).toHaveLength(0);
  });

  it("answers [] to an empty batch, and treats the batch path as traffic where batching is off", async () => {
    expect(await batch("/echo/", { requests: [] })).toMatchObject({ status: 200, body: [] });
    const r = await batch("/keep/", { requests: [] });
    expect(r.body).toMatchObject({ url: "/keep/gw/batch/" });
  });

  it("completes many concurrent loopback batches whose sub-requests outnumber the connection pool", async () => {
    const one = (b: number): ReturnType<typeof call> =>
      batch("/gw-batch/", {
        requests: Array.from({ length: 80 }, (_, i) => ({
          method: "POST",
          relative_url: `org/keys/c-${b}-${i}`,
          headers: { authorization: "sandbox-loopback-key", "x-gw-authorization": testCredentials.gatewayKey },
          body: "{}",
        })),
      });
    const answers = await Promise.all(Array.from({ length: 8 }, (_, b) => one(b)));
    for (const a of answers) expect((a.body as Array<{ code: number }>).every((i) => i.code === 200)).toBe(true);
    expect(sb.inspect.store.orgKeys.size).toBe(640);
  });

  it("needs no credential for the batch call itself", async () => {
    const r = await call(`${sb.urls.base}/echo/gw/batch/`, { method: "POST", headers: {}, body: { requests: [{ method: "GET", relative_url: "x" }] } });
    expect(r.status).toBe(200);
  });
});
