/**
 * Apply integration tests against the sandbox over real HTTP: every kind applied, a second
 * plan empty, batching and its fallback, Retry-After, retries (what an apply never does twice
 * or blindly: apply-guards.test.ts).
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { exampleSecrets, harness } from "../helpers/apply.js";
import { rawStateText } from "../helpers/state-file.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { apiDefinition, doc, numberedOrgKeys, product } from "../helpers/resources.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

describe("apply of the examples", () => {
  it("applies every kind, records server ids, and leaves a second plan empty", async () => {
    h = await harness();
    const { summary, plan } = await h.apply();
    expect(summary.failed).toEqual([]);
    expect(summary.inDoubt).toEqual([]);
    expect(summary.applied).toHaveLength(17);
    expect(plan.summary).toMatchObject({ create: 10, update: 7 });
    const objects = h.sandbox.inspect.objects() as Record<string, unknown[]>;
    expect(objects.products).toHaveLength(2);
    expect(objects.portalWebhooks).toHaveLength(2);
    expect(objects.dashboardHooks).toHaveLength(2);
    expect(objects.llmSettings).toHaveLength(2);
    expect(objects.orgKeys).toHaveLength(2);
    const store = h.sandbox.inspect.store;
    expect(store.apis.get("orders-api")!.extension).toMatchObject({ info: { name: "Orders" }, server: { authentication: { enabled: true } } });
    expect(store.apis.get("petstore-v1")!.flags).toEqual({ allowList: false, validateRequest: true, mockResponse: true });
    expect(store.oauthClients.get("petstore-v1\0petstore-mobile-app")).toMatchObject({
      redirect_uri: "https://shop.example.com/oauth/callback",
      meta_data: { platform: "ios" },
    });
    expect(store.providers.get(3)!.clientTypes.get(31)).toMatchObject({ IdpAppType: "service", GrantType: "client_credentials" });
    expect(store.orgKeys.get("acme")).toMatchObject({
      quotaResets: 1,
      session: { hmac_string: "demo-hmac-not-a-real-secret", access_rights: { orders: { api_id: "orders-api" } } },
    });
    expect(summary.health).toEqual([expect.objectContaining({ id: "ApiDefinition/petstore", ok: true })]);

    const again = await h.plan();
    expect(again.changes.filter((c) => c.action !== "no-op")).toEqual([]);

    const state = await h.state.read();
    expect(state.resources.get("ApiProduct/storefront")!.serverId).toMatch(/^\d+$/);
    const hook = state.resources.get("PortalWebhook/access-approvals")!;
    expect(hook.address.webhook_id).toBe(hook.serverId);
    const stateText = await rawStateText(path.join(h.dir, "state/state.db"));
    for (const secret of [...Object.values(exampleSecrets), "demo-hmac-not-a-real-secret", "sandbox-only-client-secret"])
      expect(stateText).not.toContain(secret);
  });

  it("updates a created portal webhook by its recorded id, creating nothing new", async () => {
    h = await harness();
    await h.apply();
    const file = path.join(h.dir, "config/portal/webhooks.yaml");
    await writeFile(file, (await readFile(file, "utf8")).replace("Timeout: 5", "Timeout: 7"));
    const plan = await h.plan();
    const change = plan.changes.find((c) => c.id === "PortalWebhook/user-lifecycle")!;
    const id = (await h.state.read()).resources.get("PortalWebhook/user-lifecycle")!.serverId!;
    expect(change).toMatchObject({
      action: "update",
      operation: { method: "PUT", path: `/webhooks/${id}` },
      fields: [{ path: "Timeout", before: 5, after: 7 }],
    });
    const { summary } = await h.apply();
    expect(summary.applied).toEqual(["PortalWebhook/user-lifecycle"]);
    expect(h.sandbox.inspect.store.portalWebhooks.size).toBe(2);
    expect(h.sandbox.inspect.store.portalWebhooks.get(id)).toMatchObject({ Timeout: 7 });
  });
});

describe("batching", () => {
  it("sends a wave's gateway changes in batch calls through the loopback API", async () => {
    h = await harness();
    const { summary } = await h.apply();
    expect(summary.calls).toMatchObject({ batchCalls: 2, batched: 7, portal: 6, dashboard: 2, llm: 2 });
    const log = h.sandbox.inspect.calls().log;
    const management = log.filter((c) => ["patchApi", "updateOAuthClient", "upsertOrgKey"].includes(c.operation));
    expect(management).toHaveLength(7);
    expect(management.every((c) => c.internal)).toBe(true);
    expect(log.filter((c) => c.operation === "batch" && !c.internal)).toHaveLength(3); // 2 batches + 1 check
  });

  it("falls back to direct calls, with one warning, when the batch route is unavailable", async () => {
    h = await harness();
    const loopback = h.sandbox.inspect.store.apis.get("gw-loopback")!;
    (loopback.extension.server as { batchProcessing: { enabled: boolean } }).batchProcessing.enabled = false;
    const { summary } = await h.apply();
    expect(summary.failed).toEqual([]);
    expect(summary.applied).toHaveLength(17);
    expect(summary.batchFallback).toMatch(/answered 401/);
    const direct = h.sandbox.inspect.calls().log.filter((c) => ["patchApi", "updateOAuthClient", "upsertOrgKey"].includes(c.operation));
    expect(direct.filter((c) => !c.internal)).toHaveLength(7);
  });

  it("packs a wave into batches as they are sent: all applied, as few batch calls as packing them all at once", async () => {
    h = await harness({ files: numberedOrgKeys(230), rate: "{ concurrency: 1, requestsPerSecond: 1000 }" });
    const { summary } = await h.apply();
    expect(summary.failed).toEqual([]);
    expect(summary.applied).toHaveLength(230);
    expect(summary.calls).toMatchObject({ batchCalls: 5, batched: 230 });
    expect(h.sandbox.inspect.store.orgKeys.size).toBe(230);
  });

  it("stopped during a batched wave: what no batch call carried is skipped, with no trace in the state", async () => {
    h = await harness({ files: numberedOrgKeys(230), rate: "{ concurrency: 1, requestsPerSecond: 1000 }" });
    const stop = new AbortController();
    const { summary } = await h.apply({ signal: stop.signal, observe: (call) => call.operation === "batch" && stop.abort() });
    // the call after the first may have left the queue before the stop (a started call is sent)
    expect(summary.calls.batchCalls).toBeLessThanOrEqual(2);
    expect(summary.applied).toHaveLength(50 * summary.calls.batchCalls);
    expect(summary.skipped).toHaveLength(230 - summary.applied.length);
    expect(summary.failed).toEqual([]);
    expect(summary.inDoubt).toEqual([]);
    const records = (await h.state.read()).resources;
    expect([...records.keys()].sort()).toEqual([...summary.applied].sort());
    expect([...records.values()].every((r) => r.status === "applied")).toBe(true);
    expect(h.sandbox.inspect.store.orgKeys.size).toBe(summary.applied.length);
  });

  it("sends a wave's direct calls by a few workers per interface: its queue holds at most twice its concurrency", async () => {
    h = await harness({ files: numberedOrgKeys(60), batch: false, rate: "{ concurrency: 2, requestsPerSecond: 1000 }" });
    const depths: number[] = [];
    const { summary } = await h.apply({ observe: (call) => depths.push(call.queueDepth) });
    expect(summary.failed).toEqual([]);
    expect(summary.applied).toHaveLength(60);
    expect(depths).toHaveLength(60);
    expect(Math.max(...depths)).toBeLessThanOrEqual(4);
    expect(h.sandbox.inspect.store.orgKeys.size).toBe(60);
  });

  it("stopped during a wave of direct calls: what was not sent is skipped, with no trace in the state", async () => {
    h = await harness({ files: numberedOrgKeys(60), batch: false, rate: "{ concurrency: 1, requestsPerSecond: 1000 }" });
    const stop = new AbortController();
    const { summary } = await h.apply({ signal: stop.signal, observe: () => stop.abort() });
    expect(summary.applied.length).toBeGreaterThanOrEqual(1);
    expect(summary.applied.length + summary.skipped.length).toBe(60);
    expect(summary.failed).toEqual([]);
    expect(summary.inDoubt).toEqual([]);
    const records = (await h.state.read()).resources;
    expect([...records.keys()].sort()).toEqual([...summary.applied].sort());
    expect(h.sandbox.inspect.store.orgKeys.size).toBe(summary.applied.length);
  });

  it("retries sub-requests whose outcome is unknown (code 0 items)", async () => {
    h = await harness({
      files: {
        ...numberedOrgKeys(12),
        "a.yaml": apiDefinition({ name: "pets", apiId: "petstore-v1", definition: { title: "pets", server: "http://up", openapi: "3.1.0" } }),
      },
      sandbox: { seed: 3, faults: { resetRate: 0.4, scope: "internal", interfaces: ["gateway"] } },
    });
    const { summary } = await h.apply();
    expect(summary.failed).toEqual([]);
    expect(summary.applied).toHaveLength(13);
    expect(summary.calls.batchCalls).toBeGreaterThan(1);
    expect(summary.calls.retries).toBeGreaterThan(0);
    expect(h.sandbox.inspect.faults().injected.reset).toBeGreaterThan(0);
    expect(h.sandbox.inspect.store.orgKeys.size).toBe(12);
  });
});

describe("rate limits and retries", () => {
  it("pauses the whole interface for Retry-After: no call before the time, nothing created twice", async () => {
    const files = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`p${i}.yaml`, product({ name: `p${i}` })]));
    h = await harness({ files, batch: false, sandbox: { faults: { rateLimit: { requestsPerSecond: 3, burst: 3 }, interfaces: ["portal"] } } });
    const { summary } = await h.apply();
    expect(summary.failed).toEqual([]);
    expect(summary.inDoubt).toEqual([]);
    expect(summary.calls.pauses).toBeGreaterThanOrEqual(1);
    expect(h.sandbox.inspect.store.products.size).toBe(8);
    const log = h.sandbox.inspect.calls().log.filter((c) => c.interface === "portal");
    const first429 = log.find((c) => c.status === 429)!;
    expect(first429).toBeDefined();
    const pausedUntil = Date.parse(first429.at) + 1000;
    const startedLater = log.filter((c) => c.seq > first429.seq && c.status !== 429);
    expect(startedLater.length).toBeGreaterThan(0);
    for (const c of startedLater) expect(Date.parse(c.at)).toBeGreaterThanOrEqual(pausedUntil - 50);
  });

  it("pauses for Retry-After even when the throttled call gives up", async () => {
    const files = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`p${i}.yaml`, product({ name: `p${i}` })]));
    h = await harness({
      files,
      batch: false,
      rate: "{ concurrency: 1, requestsPerSecond: 1000 }",
      sandbox: { faults: { rateLimit: { requestsPerSecond: 1, burst: 1 }, interfaces: ["portal"] } },
    });
    const cfg = path.join(h.dir, "gatesync.yaml");
    await writeFile(cfg, (await readFile(cfg, "utf8")).replace("retries: { max: 4,", "retries: { max: 0,"));
    const { summary } = await h.apply();
    // each 429 fails its call at once (no retries allowed), yet the next call waits out the pause
    const log = h.sandbox.inspect.calls().log.filter((c) => c.interface === "portal");
    expect(log.map((c) => c.status)).toEqual([201, 429, 201, 429]);
    for (const t of log.filter((c) => c.status === 429)) {
      const next = log.find((c) => c.seq > t.seq);
      if (next !== undefined) expect(next.startedAt - Date.parse(t.at)).toBeGreaterThanOrEqual(1000 - 15);
    }
    expect(summary.applied).toHaveLength(2);
    expect(summary.failed.map((f) => f.message)).toEqual([expect.stringMatching(/^429: .*gave up after 1 tries/), expect.stringMatching(/^429: /)]);
    expect(summary.calls.pauses).toBe(2);
  });

  it("retries 5xx answers of idempotent operations until they apply", async () => {
    const files = {
      ...numberedOrgKeys(8),
      "a.yaml": apiDefinition({ name: "pets", apiId: "petstore-v1", definition: { title: "pets", server: "http://up", openapi: "3.1.0" } }),
      "c.yaml": doc("ClientType", "web", "providerId: 1\nclientTypeId: 10\nName: Web\nResponseTypes: code\nGrantType: pkce"),
    };
    h = await harness({ files, batch: false, sandbox: { seed: 11, faults: { errorRate: 0.3, interfaces: ["gateway", "portal"] } }, configExtra: "" });
    const cfg = path.join(h.dir, "gatesync.yaml");
    await writeFile(cfg, (await readFile(cfg, "utf8")).replace("retries: { max: 4,", "retries: { max: 10,"));
    const { summary } = await h.apply();
    expect(summary.failed).toEqual([]);
    expect(summary.applied).toHaveLength(10);
    expect(summary.calls.retries).toBeGreaterThan(0);
    const log = h.sandbox.inspect.calls().log;
    expect(log.filter((c) => c.status === 500).length).toBe(summary.calls.retries);
    expect(h.sandbox.inspect.store.orgKeys.size).toBe(8);
  });

  it("retries a create only when it certainly did not arrive (503 with Retry-After)", async () => {
    h = await harness({
      files: { "p1.yaml": product({ name: "one" }), "p2.yaml": product({ name: "two" }) },
      batch: false,
      sandbox: { seed: 5, faults: { unavailableRate: 0.5, interfaces: ["portal"] } },
    });
    const { summary } = await h.apply();
    expect(summary.applied).toHaveLength(2);
    expect(h.sandbox.inspect.store.products.size).toBe(2);
    expect(h.sandbox.inspect.faults().injected.unavailable).toBeGreaterThan(0);
  });

  it("fails, without doubt, a create that could not connect at all", async () => {
    h = await harness({ files: { "l.yaml": doc("LlmSettings", "l", "attributes: {}") } });
    const cfg = path.join(h.dir, "gatesync.yaml");
    await writeFile(cfg, (await readFile(cfg, "utf8")).replace(/llm: \{ url: [^,]+,/, "llm: { url: http://127.0.0.1:9/llm,"));
    const { summary } = await h.apply();
    expect(summary.failed).toEqual([{ id: "LlmSettings/l", message: expect.stringMatching(/ECONNREFUSED.*gave up after 5 tries/) as string }]);
    expect((await h.state.read()).resources.get("LlmSettings/l")).toMatchObject({ status: "failed" });
    expect((await h.plan()).changes[0]).toMatchObject({ action: "create" });
  });
});
