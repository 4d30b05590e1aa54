/** Every classification of the planner, its stability rules, ordering and call counts. */
import { afterAll, describe, expect, it } from "vitest";
import { hasChanges } from "../../src/plan/plan.js";
import { fieldChanges } from "../../src/plan/plan-change.js";
import type { PlannedChange } from "../../src/plan/plan-change.js";
import { desiredFrom, doc, emptyState, petstore, planFor, recordPlan, stateOf } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { orgKey, product } from "../helpers/resources.js";

afterAll(removeTempRepos);

const change = (plan: { changes: readonly PlannedChange[] }, id: string): PlannedChange => {
  const c = plan.changes.find((x) => x.id === id);
  if (c === undefined) throw new Error(`no change for ${id}`);
  return c;
};

/** Plans `before`, records it, then plans `after` against that state. */
async function replan(
  before: Record<string, string>,
  after: Record<string, string>,
  opts: { env?: Record<string, string>; envAfter?: Record<string, string>; appTypeProviders?: number[] } = {},
): Promise<ReturnType<typeof planFor>> {
  const first = await desiredFrom(before, opts);
  const state = recordPlan(planFor(first), first.desired, emptyState);
  const second = await desiredFrom(after, { ...opts, ...(opts.envAfter === undefined ? {} : { env: opts.envAfter }) });
  return planFor(second, state);
}

/** The OrgKey and the ApiProduct most tests here plan. */
const acme = { name: "acme", keyId: "org-acme" };
const shop = { name: "shop", title: "Shop" };

describe("create", () => {
  it("creates kinds that the interfaces can create, naming the operation", async () => {
    const set = await desiredFrom({
      "k.yaml": orgKey({ ...acme, spec: "rate: 10" }),
      "p.yaml": product(shop),
      "w.yaml": doc("PortalWebhook", "hook", "Name: n\nURL: https://h/x\nMethod: POST\nEvents: [UserRegistered]"),
      "d.yaml": doc("DashboardWebhook", "dash", "method: GET\ntarget_path: https://h/y"),
      "l.yaml": doc("LlmSettings", "llm", "attributes: { model_name: m }"),
    });
    const plan = planFor(set);
    expect(plan.changes.map((c) => [c.id, c.action, c.operation?.method, c.operation?.path])).toEqual([
      ["OrgKey/acme", "create", "POST", "/gw/org/keys/org-acme"],
      ["ApiProduct/shop", "create", "POST", "/products"],
      ["PortalWebhook/hook", "create", "POST", "/webhooks"],
      ["DashboardWebhook/dash", "create", "POST", "/api/hooks"],
      ["LlmSettings/llm", "create", "POST", "/llm-settings"],
    ]);
    expect(fieldChanges(change(plan, "OrgKey/acme"))).toEqual([{ path: "rate", op: "add", after: 10 }]);
    expect(hasChanges(plan)).toBe(true);
  });

  it("plans a first apply of kinds that cannot be created as an update of the existing object", async () => {
    const plan = planFor(
      await desiredFrom({ "a.yaml": petstore, "c.yaml": doc("OAuthClient", "app", "apiRef: petstore\nclientId: app-1\nredirect_uri: https://x") }),
    );
    const api = change(plan, "ApiDefinition/petstore");
    expect(api).toMatchObject({
      action: "update",
      operation: { method: "PATCH", path: "/gw/apis/oas/petstore-v1", query: "?listenPath=%2Fpetstore%2F", number: 1 },
    });
    expect(api.notes.join(" ")).toMatch(/must already exist/);
    expect(change(plan, "OAuthClient/app")).toMatchObject({ action: "update", operation: { path: "/gw/oauth/clients/petstore-v1/app-1" } });
    // as a create's, its fields are every field of the request, read from the desired resource when shown (not held twice)
    const client = change(plan, "OAuthClient/app");
    expect(fieldChanges(client).map((f) => f.path)).toEqual(["description", "meta_data", "policy_id", "redirect_uri"]);
    expect(fieldChanges(client).every((f) => f.op === "add")).toBe(true);
    expect((JSON.parse(JSON.stringify(client)) as PlannedChange).fields).toEqual(fieldChanges(client));
  });

  it("adopts an existing portal webhook given its id: an update, not a create", async () => {
    const plan = planFor(
      await desiredFrom({ "w.yaml": doc("PortalWebhook", "hook", "webhookId: wh-7\nName: n\nURL: https://h/x\nMethod: POST\nEvents: [UserRegistered]") }),
    );
    expect(change(plan, "PortalWebhook/hook")).toMatchObject({ action: "update", operation: { method: "PUT", path: "/webhooks/wh-7" } });
  });
});

describe("update and no-op", () => {
  it("is a no-op once recorded, and an update naming each changed field old → new", async () => {
    const before = { "a.yaml": petstore, "k.yaml": orgKey({ ...acme, spec: "rate: 10\nper: 1\ntags: [a]" }) };
    const same = await replan(before, before);
    expect(same.changes.map((c) => c.action)).toEqual(["no-op", "no-op"]);
    expect(hasChanges(same)).toBe(false);
    const changed = await replan(before, {
      "a.yaml": petstore.replace("title: Petstore", "title: Pet Store"),
      "k.yaml": orgKey({ ...acme, spec: "rate: 20\nper: 1\ntags: [a, b]" }),
    });
    expect(change(changed, "ApiDefinition/petstore")).toMatchObject({
      action: "update",
      fields: [{ path: "definition.info.title", op: "change", before: "Petstore", after: "Pet Store" }],
    });
    expect(fieldChanges(change(changed, "OrgKey/acme"))).toEqual([
      { path: "rate", op: "change", before: 10, after: 20 },
      { path: "tags", op: "change", before: ["a"], after: ["a", "b"] },
    ]);
  });

  it("shows removed fields, and sends OAuth clients whole (a removed field is cleared)", async () => {
    const client = (extra: string): string => doc("OAuthClient", "app", `apiId: api\nclientId: c\n${extra}`);
    const plan = await replan({ "c.yaml": client("redirect_uri: https://x\ndescription: d") }, { "c.yaml": client("redirect_uri: https://x") });
    expect(fieldChanges(change(plan, "OAuthClient/app"))).toEqual([{ path: "description", op: "change", before: "d", after: "" }]);
  });

  it("retries a resource whose last attempt failed", async () => {
    const set = await desiredFrom({ "k.yaml": orgKey({ ...acme, spec: "rate: 1" }) });
    const recorded = recordPlan(planFor(set), set.desired, emptyState);
    const failed = stateOf([{ ...recorded.resources.get("OrgKey/acme")!, status: "failed", error: "503 from the gateway" }]);
    const plan = planFor(set, failed);
    expect(change(plan, "OrgKey/acme")).toMatchObject({ action: "update" });
    expect(change(plan, "OrgKey/acme").notes.join()).toMatch(/last attempt failed: 503/);
  });
});

describe("stability: nothing but a real change makes a diff", () => {
  it.each([
    [
      "key order and YAML style",
      orgKey({ ...acme, spec: "rate: 10\nper: 1\nmeta_data: { a: 1, b: 2 }" }),
      orgKey({ ...acme, spec: "meta_data:\n  b: 2\n  a: 1\nper: 1\nrate: 10" }),
    ],
    ["equal numbers written differently", orgKey({ ...acme, spec: "rate: 10\nper: 1.0" }), orgKey({ ...acme, spec: "rate: 1.0e1\nper: 1" })],
    ["a default left out or written", product(shop), product({ ...shop, spec: "IsDocumentationOnly: false" })],
    [
      "CSV spacing",
      doc("ClientType", "ct", "providerId: 1\nclientTypeId: 2\nName: n\nResponseTypes: code,token\nGrantType: pkce"),
      doc("ClientType", "ct", "providerId: 1\nclientTypeId: 2\nName: n\nResponseTypes: ' code , token '\nGrantType: pkce\nDescription: ''"),
    ],
    [
      "the order of a webhook's events",
      doc("PortalWebhook", "h", "Name: n\nURL: https://h\nMethod: POST\nEvents: [UserRegistered, PasswordReset]"),
      doc("PortalWebhook", "h", "Name: n\nURL: https://h\nMethod: POST\nTimeout: 0\nEvents: [PasswordReset, UserRegistered]"),
    ],
    [
      "an OAuth client's empty fields left out",
      doc("OAuthClient", "c", "apiId: a\nclientId: c"),
      doc("OAuthClient", "c", "apiId: a\nclientId: c\ndescription: ''\nmeta_data: null\npolicy_id: ''"),
    ],
    ["JSON instead of YAML", orgKey({ ...acme, spec: "rate: 10" }), ""],
  ])("%s", async (_label, a, b) => {
    const after =
      b === ""
        ? { "k.json": JSON.stringify({ apiVersion: "gatesync.dev/v1", kind: "OrgKey", metadata: { name: "acme" }, spec: { keyId: "org-acme", rate: 10 } }) }
        : { "r.yaml": b };
    const plan = await replan({ "r.yaml": a }, after);
    expect(plan.changes.map((c) => [c.id, c.action, fieldChanges(c)])).toEqual([[plan.changes[0]!.id, "no-op", []]]);
  });

  it("never diffs the fields an app-type provider derives", async () => {
    const ct = (auth: string, grant: string): string =>
      doc(
        "ClientType",
        "m2m",
        `providerId: 3\nclientTypeId: 31\nName: M2M\nIdpAppType: service\nResponseTypes: token\nGrantType: ${grant}\nTokenEndpointAuthMethod: ${auth}`,
      );
    const plan = await replan(
      { "c.yaml": ct("client_secret_post", "client_credentials") },
      { "c.yaml": ct("client_secret_basic", "pkce") },
      { appTypeProviders: [3] },
    );
    expect(change(plan, "ClientType/m2m").action).toBe("no-op");
    // for a regular provider the same edit is a change
    const regular = await replan({ "c.yaml": ct("client_secret_post", "pkce") }, { "c.yaml": ct("client_secret_basic", "pkce") });
    expect(fieldChanges(change(regular, "ClientType/m2m"))).toEqual([
      { path: "TokenEndpointAuthMethod", op: "change", before: "client_secret_post", after: "client_secret_basic" },
    ]);
  });
});

describe("blocked", () => {
  it.each([
    ["ApiProduct", product({ ...shop, spec: "Description: a" }), product({ ...shop, spec: "Description: b" }), /no update for API products/],
    [
      "LlmSettings",
      doc("LlmSettings", "l", "attributes: { temperature: 0.1 }"),
      doc("LlmSettings", "l", "attributes: { temperature: 0.2 }"),
      /LLM-settings interface offers no update/,
    ],
    [
      "DashboardWebhook",
      doc("DashboardWebhook", "d", "method: GET\ntarget_path: https://a"),
      doc("DashboardWebhook", "d", "method: POST\ntarget_path: https://a"),
      /dashboard interface offers no update/,
    ],
  ])("blocks a change to a created %s, saying why and what to do", async (_k, a, b, reason) => {
    const plan = await replan({ "r.yaml": a }, { "r.yaml": b });
    const c = plan.changes[0]!;
    expect(c.action).toBe("blocked");
    expect(c.reason).toMatch(reason);
    expect(c.hint).toMatch(/by hand|new metadata.name|new name/);
    expect(fieldChanges(c).length).toBe(1);
    expect(c.operation).toBeUndefined();
    expect(hasChanges(plan)).toBe(false);
  });

  it("blocks a secret-only change of an OAuth client, and notes it when other fields change too", async () => {
    const client = (extra: string): string => doc("OAuthClient", "app", `apiId: a\nclientId: c\nsecret: \${env:S}\n${extra}`);
    const only = await replan({ "c.yaml": client("") }, { "c.yaml": client("") }, { env: { S: "old-secret-value" }, envAfter: { S: "new-secret-value" } });
    expect(change(only, "OAuthClient/app")).toMatchObject({ action: "blocked", fields: [{ path: "secret", op: "change" }] });
    expect(change(only, "OAuthClient/app").reason).toMatch(/ignores `secret`/);
    expect(change(only, "OAuthClient/app").hint).toMatch(/state resolve OAuthClient\/app --accept/);
    const both = await replan(
      { "c.yaml": client("") },
      { "c.yaml": client("description: new") },
      { env: { S: "old-secret-value" }, envAfter: { S: "new-secret-value" } },
    );
    expect(change(both, "OAuthClient/app")).toMatchObject({ action: "update" });
    expect(change(both, "OAuthClient/app").notes.join()).toMatch(/secret will not change/);
  });

  it("blocks a create whose outcome is in doubt, and explains how to resolve it", async () => {
    const set = await desiredFrom({ "p.yaml": product(shop) });
    const state = stateOf([
      {
        id: "ApiProduct/shop",
        kind: "ApiProduct",
        name: "shop",
        address: {},
        status: "in-doubt",
        error: "timeout after sending",
        createdAt: "t",
        updatedAt: "t",
      },
    ]);
    const c = change(planFor(set, state), "ApiProduct/shop");
    expect(c).toMatchObject({ action: "blocked" });
    expect(c.reason).toMatch(/outcome is unknown.*timeout after sending.*duplicate/);
    expect(c.hint).toMatch(/state resolve ApiProduct\/shop --id .*--forget/);
  });
});

describe("secrets and quota resets", () => {
  it("shows a rotated secret as a change of a sensitive value, never the value", async () => {
    const key = orgKey({ ...acme, spec: "hmac_string: ${env:HMAC}" });
    const plan = await replan({ "k.yaml": key }, { "k.yaml": key }, { env: { HMAC: "first-value-123" }, envAfter: { HMAC: "second-value-456" } });
    const c = change(plan, "OrgKey/acme");
    expect(c.action).toBe("update");
    expect(fieldChanges(c)).toHaveLength(1);
    expect(fieldChanges(c)[0]).toMatchObject({
      path: "hmac_string",
      op: "change",
      before: { $sensitive: expect.any(String) as string },
      after: { $sensitive: expect.any(String) as string },
    });
    expect(JSON.stringify(plan)).not.toMatch(/first-value|second-value/);
  });

  it("plans a quota reset exactly when the trigger changes", async () => {
    const key = (trigger: string): string => orgKey({ ...acme, spec: `rate: 1${trigger === "" ? "" : `\nquotaResetTrigger: "${trigger}"`}` });
    const first = planFor(await desiredFrom({ "k.yaml": key("2026-10") }));
    expect(change(first, "OrgKey/acme")).toMatchObject({ action: "create", quotaReset: true, operation: { query: "?reset_quota=1" } });
    expect(change(await replan({ "k.yaml": key("2026-10") }, { "k.yaml": key("2026-10") }), "OrgKey/acme")).toMatchObject({ action: "no-op" });
    const next = change(await replan({ "k.yaml": key("2026-10") }, { "k.yaml": key("2026-11") }), "OrgKey/acme");
    // a trigger-only change shows the trigger as its field (a plan of one update with no field said nothing of why)
    expect(next).toMatchObject({
      action: "update",
      quotaReset: true,
      fields: [{ path: "quotaResetTrigger", op: "change", before: "2026-10", after: "2026-11" }],
      operation: { query: "?reset_quota=1" },
    });
    expect(change(await replan({ "k.yaml": key("2026-10") }, { "k.yaml": key("") }), "OrgKey/acme")).toMatchObject({ action: "no-op" });
  });
});
