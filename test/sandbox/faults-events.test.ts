/** Faults on demand, robustness against hostile requests, event delivery, inspection, CLI. */
import { spawn } from "node:child_process";
import { connect, createServer } from "node:net";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import type { Receiver } from "../helpers/receiver.js";
import { startReceiver } from "../helpers/receiver.js";
import { cliArgs, runCli } from "../helpers/cli.js";
import { call, dash, gw, llm, portal, testSandbox } from "../helpers/sandbox.js";
import { projectRoot } from "../helpers/temp-repo.js";

let sb: SandboxHandle;
let receiver: Receiver;

beforeAll(async () => {
  sb = await testSandbox({ maxBodyBytes: 64 * 1024, maxDepth: 32 });
  receiver = await startReceiver();
});
afterAll(async () => {
  await sb.stop();
  await receiver.stop();
});
beforeEach(() => {
  sb.inspect.reset();
  sb.inspect.setFaults({
    resetRate: 0,
    errorRate: 0,
    unavailableRate: 0,
    lostResponseRate: 0,
    rateLimit: undefined,
    latencyMs: 0,
    jitterMs: 0,
    scope: "all",
    interfaces: ["gateway", "portal", "dashboard", "llm"],
    seed: 7,
  });
  receiver.received.length = 0;
});

const upsert = (key: string): ReturnType<typeof call> => call(`${sb.urls.gateway}/gw/org/keys/${key}`, { method: "POST", headers: gw, body: { rate: 1 } });

describe("faults", () => {
  it("says when no request is in its hands any more, also one whose client gave up", async () => {
    sb.inspect.setFaults({ latencyMs: 400 });
    const started = Date.now();
    const gone = new AbortController();
    const sent = fetch(`${sb.urls.gateway}/gw/org/keys/slow`, {
      method: "POST",
      headers: { ...gw, "content-type": "application/json" },
      body: JSON.stringify({ rate: 1 }),
      signal: gone.signal,
    }).catch(() => undefined);
    await sleep(100);
    gone.abort();
    await sent;
    // the client is gone; the sandbox is still handling its call (its answer is held back 400 ms)
    await sb.idle();
    expect(Date.now() - started).toBeGreaterThanOrEqual(390);
    expect(sb.inspect.store.orgKeys.has("slow")).toBe(true);
    await sb.idle(); // nothing in flight: at once
  });

  it("counts a request from its first byte: the bytes of a client gone before they were read still make their call", async () => {
    // what a client killed just after writing leaves: a whole request in the socket, then its end
    const url = new URL(`${sb.urls.portal}/webhooks`);
    const body = JSON.stringify({ Name: "late", URL: "https://hooks.example/late", Method: "POST", Events: [] });
    const socket = connect(Number(url.port), url.hostname);
    await new Promise<void>((resolve) => socket.once("connect", resolve));
    const head = [`POST ${url.pathname} HTTP/1.1`, `Host: ${url.host}`, "Content-Type: application/json", `Content-Length: ${Buffer.byteLength(body)}`];
    for (const [name, value] of Object.entries(portal)) head.push(`${name}: ${value}`);
    socket.end(`${head.join("\r\n")}\r\n\r\n${body}`);
    // looked at in the same turn: the sandbox has not read a byte of it yet
    await sb.idle();
    expect([...sb.inspect.store.portalWebhooks.values()].map((w) => w.Name)).toEqual(["late"]);
    socket.destroy();
  });

  it("answers 429 with Retry-After in the interface's format once the bucket is empty, and lets calls through after that time", async () => {
    // slow refill (a token every 2 s): a loaded machine pausing between the calls does not refill the bucket
    sb.inspect.setFaults({ rateLimit: { requestsPerSecond: 0.5, burst: 2 } });
    expect((await upsert("a")).status).toBe(200);
    expect((await upsert("b")).status).toBe(200);
    const refused = await upsert("c");
    expect(refused).toMatchObject({ status: 429, body: { status: "error", message: "rate limit exceeded" } });
    const wait = Number(refused.headers["retry-after"]);
    expect(wait).toBeGreaterThanOrEqual(1);
    expect(sb.inspect.store.orgKeys.has("c")).toBe(false);
    // the bucket is per interface: the portal is not limited by the gateway's calls
    const portalCall = await call(`${sb.urls.portal}/webhooks`, {
      method: "POST",
      headers: portal,
      body: { Name: "n", URL: "https://x", Method: "POST", Events: [] },
    });
    expect(portalCall.status).toBe(201);
    await sleep(wait * 1000);
    expect((await upsert("c")).status).toBe(200);
    expect(sb.inspect.faults().injected.throttled).toBe(1);
  });

  it("answers 500 or 503 + Retry-After before processing: nothing changes", async () => {
    sb.inspect.setFaults({ errorRate: 1 });
    expect(await upsert("a")).toMatchObject({ status: 500, body: { status: "error" } });
    expect(await call(`${sb.urls.portal}/webhooks`, { method: "POST", headers: portal, body: {} })).toMatchObject({
      status: 500,
      body: { errors: ["injected fault"] },
    });
    sb.inspect.setFaults({ errorRate: 0, unavailableRate: 1 });
    const r = await call(`${sb.urls.dashboard}/api/hooks`, { method: "POST", headers: dash, body: { method: "GET", target_path: "x" } });
    expect(r).toMatchObject({ status: 503, body: { Status: "Error" } });
    expect(r.headers["retry-after"]).toBe("1");
    expect(sb.inspect.store.orgKeys.size + sb.inspect.store.portalWebhooks.size + sb.inspect.store.dashboardHooks.length).toBe(0);
  });

  it("resets connections before processing, or processes and then loses the answer", async () => {
    sb.inspect.setFaults({ resetRate: 1 });
    await expect(upsert("a")).rejects.toThrow();
    expect(sb.inspect.store.orgKeys.has("a")).toBe(false);
    sb.inspect.setFaults({ resetRate: 0, lostResponseRate: 1 });
    await expect(call(`${sb.urls.llm}/llm-settings`, { method: "POST", headers: llm, body: { data: { attributes: {} } } })).rejects.toThrow();
    expect(sb.inspect.store.llmSettings.size).toBe(1); // created, though the client never heard
    const log = sb.inspect.calls().log;
    expect(log.map((c) => [c.fault, c.status])).toEqual([
      ["reset", 0],
      ["lostResponse", 0],
    ]);
  });

  it("applies faults only to the interfaces named", async () => {
    sb.inspect.setFaults({ errorRate: 1, interfaces: ["portal"] });
    expect((await upsert("a")).status).toBe(200);
    expect((await call(`${sb.urls.portal}/products`, { method: "POST", headers: portal, body: {} })).status).toBe(500);
  });

  it("adds latency to each call", async () => {
    sb.inspect.setFaults({ latencyMs: 150 });
    const started = performance.now();
    await upsert("a");
    expect(performance.now() - started).toBeGreaterThanOrEqual(140);
  });

  it("replays the same faults for the same seed", async () => {
    const run = async (): Promise<number[]> => {
      sb.inspect.setFaults({ errorRate: 0.5, seed: 42 });
      const statuses: number[] = [];
      for (let i = 0; i < 12; i++) statuses.push((await upsert(`k${i}`)).status);
      return statuses;
    };
    const first = await run();
    expect(new Set(first)).toEqual(new Set([200, 500]));
    expect(await run()).toEqual(first);
  });
});

describe("robustness", () => {
  it("refuses bodies over the limit and JSON nested too deeply with 413, changing nothing", async () => {
    const big = JSON.stringify({ rate: 1, pad: "x".repeat(70 * 1024) });
    expect(await call(`${sb.urls.gateway}/gw/org/keys/a`, { method: "POST", headers: gw, body: big })).toMatchObject({
      status: 413,
      body: { status: "error" },
    });
    const deep = `${"[".repeat(5000)}${"]".repeat(5000)}`;
    expect(await call(`${sb.urls.gateway}/gw/org/keys/a`, { method: "POST", headers: gw, body: deep })).toMatchObject({ status: 413 });
    expect(await call(`${sb.urls.portal}/products`, { method: "POST", headers: portal, body: `{"a":${deep}}` })).toMatchObject({
      status: 413,
      body: { errors: ["request body too large"] },
    });
    const deepYaml = `openapi: 3.1.0\ninfo: {title: t, version: '1'}\npaths: {}\nx: ${"[".repeat(5000)}${"]".repeat(5000)}\n`;
    expect((await call(`${sb.urls.gateway}/gw/apis/oas/petstore-v1`, { method: "PATCH", headers: gw, body: deepYaml })).status).toBeGreaterThanOrEqual(400);
    expect(sb.inspect.store.orgKeys.size + sb.inspect.store.products.size).toBe(0);
    expect((await upsert("after")).status).toBe(200);
  });

  it("answers wrong types and malformed bodies on every operation with the documented error, never a crash", async () => {
    const cases: Array<[string, string, Record<string, string>, number]> = [
      ["PATCH", "/gw/apis/oas/petstore-v1", gw, 400],
      ["PUT", "/gw/oauth/clients/petstore-v1/petstore-mobile-app", gw, 500],
      ["POST", "/gw/org/keys/k", gw, 400],
      ["PUT", "/portal/api/oauth-providers/1/client-types/10", portal, 400],
      ["POST", "/portal/api/products", portal, 400],
      ["POST", "/portal/api/webhooks", portal, 400],
      ["POST", "/api/hooks", dash, 403],
      ["POST", "/llm/api/llm-settings", llm, 400],
    ];
    // (`null` is JSON, and an empty update or session for some operations: see the contract table)
    for (const body of ["\u0000\u0001binary", '{"unterminated', "12", "[1]"]) {
      for (const [method, p, headers, status] of cases) {
        const r = await call(`${sb.urls.base}${p}`, { method, headers, body });
        expect([status, 422], `${method} ${p} ${body}`).toContain(r.status);
      }
    }
    expect(sb.inspect.objects()).toMatchObject({ orgKeys: [], products: [], portalWebhooks: [], dashboardHooks: [], llmSettings: [] });
  });

  it("survives garbage on the socket and keeps serving", async () => {
    await new Promise<void>((resolve) => {
      const url = new URL(sb.urls.base);
      const socket = connect(Number(url.port), url.hostname, () => socket.end("NOT HTTP AT ALL\r\n\r\n\u0000\u0001"));
      socket.on("close", () => resolve());
      socket.on("error", () => resolve());
    });
    expect((await upsert("still-alive")).status).toBe(200);
  });
});

describe("event delivery", () => {
  it("delivers an event to the webhooks subscribed to it, with their method, and gives up after Timeout", async () => {
    const create = async (name: string, url: string, method: string, events: string[], timeout: number): Promise<string> => {
      const r = await call(`${sb.urls.portal}/webhooks`, {
        method: "POST",
        headers: portal,
        body: { Name: name, URL: url, Method: method, Timeout: timeout, Events: events },
      });
      return (r.body as { ID: string }).ID;
    };
    const approved = await create("approved", `${receiver.url}/hook`, "PUT", ["AccessRequestApproved", "UserRegistered"], 5);
    await create("other", `${receiver.url}/other`, "POST", ["PasswordReset"], 5);
    const slow = await create("slow", `${receiver.url}/slow?delay=3000`, "POST", ["AccessRequestApproved"], 1);

    const r = await call(`${sb.urls.inspect}/events`, { method: "POST", body: { event: "AccessRequestApproved", message: { user: "u-1" } } });
    expect(r.status).toBe(200);
    const deliveries = (r.body as { deliveries: Array<{ webhookId: string; status?: number; error?: string }> }).deliveries;
    expect(deliveries.find((d) => d.webhookId === approved)).toEqual({ webhookId: approved, status: 200 });
    expect(deliveries.find((d) => d.webhookId === slow)?.error).toBeDefined();
    const got = receiver.received.filter((x) => x.url === "/hook");
    expect(got).toHaveLength(1);
    expect(got[0]!.method).toBe("PUT");
    const body = JSON.parse(got[0]!.body) as { Event: string; Message: unknown; Timestamp: string };
    expect(body).toMatchObject({ Event: "AccessRequestApproved", Message: { user: "u-1" } });
    expect(new Date(body.Timestamp).toISOString()).toBe(body.Timestamp);
    expect(receiver.received.some((x) => x.url === "/other")).toBe(false);
  });
});

describe("inspection interface", () => {
  it("shows objects and calls, sets faults with validation, and resets", async () => {
    await upsert("seen");
    const objects = await call(`${sb.urls.inspect}/objects`);
    expect((objects.body as { orgKeys: Array<{ keyId: string }> }).orgKeys.map((k) => k.keyId)).toEqual(["seen"]);
    const calls = await call(`${sb.urls.inspect}/calls`);
    expect(calls.body).toMatchObject({ counts: { upsertOrgKey: { total: 1, byStatus: { "200": 1 } } } });
    expect(await call(`${sb.urls.inspect}/faults`, { method: "PUT", body: { errorRate: 2 } })).toMatchObject({ status: 400 });
    expect(await call(`${sb.urls.inspect}/faults`, { method: "PUT", body: { bogus: 1 } })).toMatchObject({ status: 400 });
    expect(await call(`${sb.urls.inspect}/faults`, { method: "PUT", body: { latencyMs: 5, rateLimit: { requestsPerSecond: 10, burst: 5 } } })).toMatchObject({
      status: 200,
      body: { latencyMs: 5 },
    });
    expect(await call(`${sb.urls.inspect}/faults`, { method: "PUT", body: { rateLimit: null } })).toMatchObject({ status: 200 });
    expect((await call(`${sb.urls.inspect}/reset`, { method: "POST" })).status).toBe(204);
    expect(sb.inspect.store.orgKeys.size).toBe(0);
    expect(sb.inspect.calls().log).toEqual([]);
  });
});

describe("gatesync sandbox", () => {
  it("starts from the command line with fixtures and faults, serves, and stops on SIGTERM", async () => {
    const child = spawn(
      process.execPath,
      cliArgs("sandbox", "--port", "0", "--fixtures", "examples/sandbox-fixtures.yaml", "--rate-limit", "50:5", "--latency", "1"),
      {
        cwd: projectRoot,
        env: { ...process.env, GW_ADMIN_KEY: "cli-gw-key" },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    let out = "";
    child.stdout.on("data", (b: Buffer) => (out += b.toString()));
    const exited = new Promise<number | null>((resolve) => child.on("close", resolve));
    for (let i = 0; i < 100 && !out.includes("listening on"); i++) await sleep(100);
    const base = /listening on (\S+)/.exec(out)?.[1];
    expect(base).toBeDefined();
    expect(out).not.toContain("cli-gw-key");
    expect(out).toContain("export PORTAL_API_KEY=");
    const r = await call(`${base}/gw/apis/oas/petstore-v1`, {
      method: "PATCH",
      headers: { "x-gw-authorization": "cli-gw-key" },
      body: { openapi: "3.1.0", info: { title: "t", version: "1" }, paths: {} },
    });
    expect(r.status).toBe(200);
    const faults = await call(`${base}/__sandbox/faults`);
    expect(faults.body).toMatchObject({ latencyMs: 1, rateLimit: { requestsPerSecond: 50, burst: 5 } });
    child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });

  it("refuses bad flags with a clear message", async () => {
    const child = spawn(process.execPath, cliArgs("sandbox", "--error-rate", "3"), { cwd: projectRoot, stdio: ["ignore", "pipe", "pipe"] });
    let err = "";
    child.stderr.on("data", (b: Buffer) => (err += b.toString()));
    const code = await new Promise<number | null>((resolve) => child.on("close", resolve));
    expect(code).toBe(1);
    expect(err).toContain("error rate must be a number from 0 to 1");
    const logSize = spawn(process.execPath, cliArgs("sandbox", "--log-size", "2.5"), { cwd: projectRoot, stdio: ["ignore", "pipe", "pipe"] });
    let logErr = "";
    logSize.stderr.on("data", (b: Buffer) => (logErr += b.toString()));
    expect(await new Promise<number | null>((resolve) => logSize.on("close", resolve))).toBe(1);
    expect(logErr).toContain("log size must be a whole number from 1 up");
    const missing = await runCli(["sandbox", "--port", "0", "--fixtures", "no-such-fixtures.yaml"]);
    expect(missing.code).toBe(1);
    expect(missing.stderr).toContain("error[USAGE] cannot read the fixtures file no-such-fixtures.yaml: ENOENT");
    const blocker = createServer();
    await new Promise<void>((resolve) => blocker.listen(0, "127.0.0.1", resolve));
    try {
      const port = String((blocker.address() as AddressInfo).port);
      const taken = await runCli(["sandbox", "--port", port]);
      expect(taken.code).toBe(1);
      expect(taken.stderr).toContain(`error[CONFIG_INVALID] cannot listen on 127.0.0.1:${port}: another process is listening there (EADDRINUSE)`);
    } finally {
      await new Promise<void>((resolve) => blocker.close(() => resolve()));
    }
  });
});
