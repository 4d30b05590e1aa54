/**
 * Apply integration tests against the sandbox over real HTTP: every kind applied, a second
 * plan empty, batching and its fallback, Retry-After, retries, in-doubt creates never
 * duplicated, quota resets sent once, orphans deactivated.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { ConfigError, StateError } from "../../src/errors.js";
import type { Harness } from "../helpers/apply.js";
import { exampleSecrets, harness } from "../helpers/apply.js";
import { runCli } from "../helpers/cli.js";
import { rawStateText } from "../helpers/state-file.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { asJson } from "../helpers/record-json.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

const orgKeys = (n: number, extra = ""): Record<string, string> =>
  Object.fromEntries(Array.from({ length: n }, (_, i) => [`k${i}.yaml`, doc("OrgKey", `k${i}`, `keyId: key-${i}\nrate: ${i}${extra}`)]));
const product = (name: string): string => doc("ApiProduct", name, `Name: ${name}\nProviderID: 1`);
const apiDef = (name: string, id: string): string =>
  doc(
    "ApiDefinition",
    name,
    `apiId: ${id}\ndefinition:\n  openapi: 3.1.0\n  info: { title: ${name}, version: "1" }\n  servers: [{ url: "http://up" }]\n  paths: {}`,
  );

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
    h = await harness({ files: orgKeys(230), rate: "{ concurrency: 1, requestsPerSecond: 1000 }" });
    const { summary } = await h.apply();
    expect(summary.failed).toEqual([]);
    expect(summary.applied).toHaveLength(230);
    expect(summary.calls).toMatchObject({ batchCalls: 5, batched: 230 });
    expect(h.sandbox.inspect.store.orgKeys.size).toBe(230);
  });

  it("stopped during a batched wave: what no batch call carried is skipped, with no trace in the state", async () => {
    h = await harness({ files: orgKeys(230), rate: "{ concurrency: 1, requestsPerSecond: 1000 }" });
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
    h = await harness({ files: orgKeys(60), batch: false, rate: "{ concurrency: 2, requestsPerSecond: 1000 }" });
    const depths: number[] = [];
    const { summary } = await h.apply({ observe: (call) => depths.push(call.queueDepth) });
    expect(summary.failed).toEqual([]);
    expect(summary.applied).toHaveLength(60);
    expect(depths).toHaveLength(60);
    expect(Math.max(...depths)).toBeLessThanOrEqual(4);
    expect(h.sandbox.inspect.store.orgKeys.size).toBe(60);
  });

  it("stopped during a wave of direct calls: what was not sent is skipped, with no trace in the state", async () => {
    h = await harness({ files: orgKeys(60), batch: false, rate: "{ concurrency: 1, requestsPerSecond: 1000 }" });
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
      files: { ...orgKeys(12), "a.yaml": apiDef("pets", "petstore-v1") },
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
    const files = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`p${i}.yaml`, product(`p${i}`)]));
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
    const files = Object.fromEntries(Array.from({ length: 4 }, (_, i) => [`p${i}.yaml`, product(`p${i}`)]));
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
      ...orgKeys(8),
      "a.yaml": apiDef("pets", "petstore-v1"),
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
      files: { "p1.yaml": product("one"), "p2.yaml": product("two") },
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

describe("creates are never duplicated", () => {
  it("leaves a create that timed out in doubt, refuses to create it again, and settles with state resolve", async () => {
    h = await harness({ files: { "p.yaml": product("shop") }, sandbox: { faults: { latencyMs: 1500, interfaces: ["portal"] } } });
    const cfg = path.join(h.dir, "gatesync.yaml");
    await writeFile(cfg, (await readFile(cfg, "utf8")).replace("timeoutMs: 5000", "timeoutMs: 300"));
    const { summary } = await h.apply();
    expect(summary.inDoubt).toEqual([{ id: "ApiProduct/shop", message: expect.stringMatching(/Timeout/i) as string }]);
    await new Promise((r) => setTimeout(r, 1400));
    expect(h.sandbox.inspect.store.products.size).toBe(1);
    const record = (await h.state.read()).resources.get("ApiProduct/shop")!;
    expect(record.status).toBe("in-doubt");

    const plan = await h.plan();
    expect(plan.changes[0]).toMatchObject({ action: "blocked" });
    h.sandbox.inspect.setFaults({ latencyMs: 0 });
    const second = await h.apply();
    expect(second.summary.applied).toEqual([]);
    expect(h.sandbox.inspect.calls().counts.createProduct?.total).toBe(1);
    expect(h.sandbox.inspect.store.products.size).toBe(1);

    const id = String([...h.sandbox.inspect.store.products.keys()][0]);
    const resolved = await runCli(["state", "resolve", "ApiProduct/shop", "--id", id, "--config", path.join(h.dir, "gatesync.yaml")], h.env);
    expect(resolved.code).toBe(0);
    expect((await h.plan()).changes[0]).toMatchObject({ action: "no-op" });
  });

  it("records the intent before sending: a create with no answer stays in doubt, and --forget lets it be created", async () => {
    h = await harness({
      files: { "w.yaml": doc("DashboardWebhook", "d", "method: GET\ntarget_path: https://x") },
      sandbox: { faults: { lostResponseRate: 1, interfaces: ["dashboard"] } },
    });
    const { summary } = await h.apply();
    expect(summary.inDoubt.map((x) => x.id)).toEqual(["DashboardWebhook/d"]);
    expect(h.sandbox.inspect.store.dashboardHooks).toHaveLength(1);
    expect(asJson((await h.state.read()).resources.get("DashboardWebhook/d"))).toMatchObject({ status: "in-doubt", attempted: { method: "GET" } });
    // the operator checks, finds it does not exist (here: removes it), and forgets the record
    h.sandbox.inspect.store.dashboardHooks = [];
    h.sandbox.inspect.setFaults({ lostResponseRate: 0 });
    expect((await runCli(["state", "resolve", "DashboardWebhook/d", "--forget", "--config", path.join(h.dir, "gatesync.yaml")], h.env)).code).toBe(0);
    const again = await h.apply();
    expect(again.summary.applied).toEqual(["DashboardWebhook/d"]);
    expect(h.sandbox.inspect.store.dashboardHooks).toHaveLength(1);
  });
});

describe("quota resets", () => {
  it("sends reset_quota=1 exactly once per new trigger", async () => {
    const key = (trigger: string): Record<string, string> => ({
      "k.yaml": doc("OrgKey", "acme", `keyId: acme\nquota_max: 10\nquota_renewal_rate: 60\nquotaResetTrigger: "${trigger}"`),
    });
    h = await harness({ files: key("2026-10") });
    await h.apply();
    await h.apply();
    const stored = (): number => h!.sandbox.inspect.store.orgKeys.get("acme")!.quotaResets;
    expect(stored()).toBe(1);
    await writeFile(path.join(h.dir, "config/k.yaml"), key("2026-11")["k.yaml"]!);
    const { summary } = await h.apply();
    expect(summary.quotaResets).toBe(1);
    await h.apply();
    expect(stored()).toBe(2);
  });
});

describe("orphans", () => {
  it("deactivates API definitions and org keys that leave the repository, once, and refuses when the state lacks the body", async () => {
    const orders = await readFile(path.join("examples/config/apis/orders.yaml"), "utf8");
    h = await harness({
      files: {
        "orders.yaml": orders,
        "globex.yaml": doc("OrgKey", "globex", "keyId: globex\norg_id: globex\nrate: 100"),
        "acme.yaml": doc("OrgKey", "acme", "keyId: acme\nhmac_enabled: true\nhmac_string: literal-hmac-value"),
        "p.yaml": product("kept"),
      },
      // two of the three keys and APIs leave at once: past the guard's share, allowed here
      configExtra: "orphans: deactivate\ndeactivationGuard: { allow: true }\n",
    });
    await h.apply();
    for (const f of ["orders.yaml", "globex.yaml", "acme.yaml"]) await rm(path.join(h.dir, "config", f));
    const { summary, plan } = await h.apply();
    expect(plan.changes.find((c) => c.id === "ApiDefinition/orders")).toMatchObject({
      action: "orphan",
      deactivate: true,
      operation: { method: "PATCH", path: "/gw/apis/oas/orders-api", query: "?authentication=true" },
      fields: [{ path: "definition.x-gw-api-gateway.info.state.active", before: true, after: false }],
    });
    expect(plan.changes.find((c) => c.id === "OrgKey/acme")).toMatchObject({
      action: "orphan",
      reason: expect.stringMatching(/not deactivated: the key's last body holds sensitive values/) as string,
    });
    expect(plan.changes.find((c) => c.id === "OrgKey/acme")!.deactivate).toBeUndefined();
    expect([...summary.applied].sort()).toEqual(["ApiDefinition/orders", "OrgKey/globex"]);
    const store = h.sandbox.inspect.store;
    expect(store.apis.get("orders-api")!.extension).toMatchObject({
      info: { name: "Orders", state: { active: false } },
      server: { authentication: { enabled: true } },
    });
    expect(store.orgKeys.get("globex")!.session).toMatchObject({ org_id: "globex", rate: 100, is_inactive: true });
    expect(store.orgKeys.get("acme")!.session).not.toHaveProperty("is_inactive", true);

    const again = await h.plan();
    expect(again.changes.filter((c) => c.action === "orphan").map((c) => [c.id, c.deactivate === true, /deactivated on/.test(c.reason ?? "")])).toEqual([
      ["ApiDefinition/orders", false, true],
      ["OrgKey/acme", false, false],
      ["OrgKey/globex", false, true],
    ]);
  });
});

describe("guards", () => {
  it("refuses a saved plan once the state changed", async () => {
    h = await harness({ files: orgKeys(2) });
    const saved = await h.plan();
    await h.apply();
    await expect(h.apply({ savedPlan: saved })).rejects.toBeInstanceOf(StateError);
    await expect(h.apply({ savedPlan: saved })).rejects.toMatchObject({ code: "STATE_CHANGED" });
  });

  it("applies a saved plan when nothing changed, and refuses one whose files changed", async () => {
    h = await harness({ files: orgKeys(2) });
    const saved = await h.plan();
    await writeFile(path.join(h.dir, "config/k0.yaml"), doc("OrgKey", "k0", "keyId: key-0\nrate: 99"));
    await expect(h.apply({ savedPlan: saved })).rejects.toMatchObject({ code: "STATE_CHANGED", message: expect.stringMatching(/no longer matches/) as string });
    await writeFile(path.join(h.dir, "config/k0.yaml"), doc("OrgKey", "k0", "keyId: key-0\nrate: 0"));
    const { summary } = await h.apply({ savedPlan: saved });
    expect(summary.applied).toHaveLength(2);
  });

  it("stops before any call when a credential is missing, naming the variable", async () => {
    h = await harness({ files: orgKeys(1) });
    delete h.env.GW_KEY;
    const err = await h.apply().catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ConfigError);
    expect((err as Error).message).toMatch(/GW_KEY is not set/);
    expect(h.sandbox.inspect.calls().log).toEqual([]);
  });
});
