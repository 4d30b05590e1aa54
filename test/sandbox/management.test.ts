/**
 * Contract tests of the sandbox's management operations over real HTTP: each operation's
 * success, its documented errors (codes and bodies of docs/interface-behaviour), and auth.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { call, dash, gw, llm, portal, testSandbox } from "../helpers/sandbox.js";
import { projectRoot } from "../helpers/temp-repo.js";

let sb: SandboxHandle;
beforeAll(async () => {
  sb = await testSandbox();
});
afterAll(async () => sb.stop());
beforeEach(() => sb.inspect.reset());

const oas = { openapi: "3.1.0", info: { title: "Pets", version: "2" }, servers: [{ url: "http://pets.internal" }], paths: {} };
const gwError = (message: string): object => ({ status: "error", message });

describe("gateway credential (operations 1, 2, 7)", () => {
  it.each([
    ["missing", {}],
    ["wrong", { "x-gw-authorization": "nope" }],
  ])("answers 403 to a %s key, before any routing", async (_label, headers) => {
    for (const [method, p] of [
      ["PATCH", "/gw/apis/oas/petstore-v1"],
      ["GET", "/gw/does/not/exist"],
      ["POST", "/gw/org/keys/k"],
    ] as const) {
      const r = await call(`${sb.urls.gateway}${p}`, { method, headers, body: "{}" });
      expect(r.status).toBe(403);
      expect(r.body).toEqual(gwError("Attempted administrative access with invalid or missing key!"));
    }
    expect(sb.inspect.objects().orgKeys).toEqual([]);
  });

  it("answers 404 to an unknown route and 405 to a wrong method, with a good key", async () => {
    expect((await call(`${sb.urls.gateway}/gw/nothing/here`, { headers: gw })).status).toBe(404);
    const r = await call(`${sb.urls.gateway}/gw/apis/oas/petstore-v1`, { method: "GET", headers: gw });
    expect(r).toMatchObject({ status: 405, body: gwError("Method not supported") });
  });
});

describe("operation 1: PATCH /gw/apis/oas/{apiID}", () => {
  const patch = (id: string, body: unknown, query = ""): Promise<Awaited<ReturnType<typeof call>>> =>
    call(`${sb.urls.gateway}/gw/apis/oas/${id}${query}`, { method: "PATCH", headers: gw, body: body as object });

  it("patches an existing API and keeps its extension when the body leaves it out", async () => {
    const r = await patch("petstore-v1", oas, "?listenPath=%20/pets/%20&mockResponse=1&validateRequest=true&allowList=yes&customDomain=pets.example.com");
    expect(r).toMatchObject({ status: 200, body: { key: "petstore-v1", status: "ok", action: "modified" } });
    const api = sb.inspect.store.apis.get("petstore-v1")!;
    expect(api.document).toEqual(oas);
    expect(api.extension).toMatchObject({
      info: { id: "petstore-v1", name: "Swagger Petstore", state: { active: true } },
      server: { listenPath: { value: "/pets/" }, customDomain: { name: "pets.example.com", enabled: true } },
    });
    // `yes` is not a boolean: ignored, not an error
    expect(api.flags).toEqual({ allowList: false, validateRequest: true, mockResponse: true });
  });

  it("accepts a YAML body, and replaces the extension when the body carries one", async () => {
    const yaml = await readFile(path.join(projectRoot, "examples/config/openapi/petstore.yaml"), "utf8");
    expect((await call(`${sb.urls.gateway}/gw/apis/oas/petstore-v1`, { method: "PATCH", headers: gw, body: yaml })).status).toBe(200);
    const ext = {
      info: { id: "petstore-v1", name: "Renamed", state: { active: false } },
      server: { listenPath: { value: "/" } },
      upstream: { url: "http://x" },
    };
    expect((await patch("petstore-v1", { ...oas, "x-gw-api-gateway": ext })).status).toBe(200);
    expect(sb.inspect.store.apis.get("petstore-v1")!.extension).toMatchObject({
      info: { name: "Renamed", state: { active: false } },
      server: { listenPath: { value: "/" } },
    });
  });

  it.each([
    ["a body that is neither JSON nor YAML", "petstore-v1", "{not: [valid", "", 400, "request malformed"],
    ["bad JSON sent to an unknown API", "nope", "{{{", "", 400, "request malformed"],
    ["an empty apiID (the collection route, which has no PATCH)", "", oas, "", 405, "Method not supported"],
    ["an unknown apiID", "nope", oas, "", 404, "API not found"],
    [
      "a definition whose id differs from the path's",
      "petstore-v1",
      {
        ...oas,
        "x-gw-api-gateway": {
          info: { id: "other", name: "P", state: { active: true } },
          upstream: { url: "http://u" },
          server: { listenPath: { value: "/p/" } },
        },
      },
      "",
      400,
      "Request APIID does not match that in Definition! For Update operations these must match.",
    ],
    ["a relative upstreamURL", "petstore-v1", oas, "?upstreamURL=/relative", 400, "invalid upstreamURL: it must be an absolute URL"],
    [
      "authentication=true without security",
      "petstore-v1",
      oas,
      "?authentication=true",
      400,
      "authentication requires a security requirement in the OpenAPI document",
    ],
  ])("refuses %s", async (_label, id, body, query, status, message) => {
    const before = structuredClone(sb.inspect.store.apis.get("petstore-v1"));
    const r = await call(`${sb.urls.gateway}/gw/apis/oas/${id}${query}`, { method: "PATCH", headers: gw, body: body as string });
    expect(r).toMatchObject({ status, body: gwError(message) });
    expect(sb.inspect.store.apis.get("petstore-v1")).toEqual(before);
  });

  it("refuses a document that breaks the OpenAPI schema, with the validator's message", async () => {
    const r = await patch("petstore-v1", { openapi: "3.1.0", info: { title: "t", version: "1" }, paths: {}, servers: "nope" });
    expect(r.status).toBe(400);
    expect((r.body as { message: string }).message).toMatch(/servers: must be array/);
  });

  it("refuses a document with neither servers nor an upstreamURL flag once a flag is given, and accepts it without flags", async () => {
    const bare = { openapi: "3.1.0", info: { title: "t", version: "1" }, paths: {} };
    expect(await patch("orders-api", bare, "?listenPath=/o/")).toMatchObject({ status: 400, body: { status: "error" } });
    expect((await patch("orders-api", bare)).status).toBe(200);
  });
});

describe("operation 2: PUT /gw/oauth/clients/{apiID}/{keyName}", () => {
  const url = (api: string, client: string): string => `${sb.urls.gateway}/gw/oauth/clients/${api}/${client}`;

  it("replaces redirect_uri, policy_id, meta_data and description wholesale, ignoring secret and ids", async () => {
    const r = await call(url("petstore-v1", "petstore-mobile-app"), {
      method: "PUT",
      headers: gw,
      body: {
        redirect_uri: "https://new/cb",
        policy_id: "mobile-default",
        meta_data: { a: 1 },
        secret: "attempted-change",
        client_id: "other",
        api_id: "other",
      },
    });
    expect(r.status).toBe(200);
    expect(r.body).toEqual({
      client_id: "petstore-mobile-app",
      redirect_uri: "https://new/cb",
      policy_id: "mobile-default",
      secret: "sandbox-only-client-secret",
      meta_data: { a: 1 },
      description: "",
    });
    const left = await call(url("petstore-v1", "petstore-mobile-app"), { method: "PUT", headers: gw, body: { policy_id: "mobile-default" } });
    expect(left.body).toMatchObject({ redirect_uri: "", meta_data: null, description: "" });
  });

  it("revokes the client's tokens when its policy changes from a non-empty one", async () => {
    await call(url("petstore-v1", "petstore-mobile-app"), { method: "PUT", headers: gw, body: { policy_id: "gold-tier" } });
    expect(sb.inspect.store.oauthClients.get("petstore-v1\0petstore-mobile-app")).toMatchObject({ tokens: 0, revokedTokens: 12 });
  });

  it.each([
    ["a body that is not JSON", "petstore-v1", "petstore-mobile-app", "nope", 500, "Unmarshalling failed"],
    ["a field of the wrong type", "petstore-v1", "petstore-mobile-app", { redirect_uri: 5 }, 500, "Unmarshalling failed"],
    ["an unknown API", "ghost", "petstore-mobile-app", {}, 404, "API doesn't exist"],
    ["an unknown client", "petstore-v1", "ghost", {}, 404, "OAuth Client ID not found"],
    ["an unknown policy", "petstore-v1", "petstore-mobile-app", { policy_id: "ghost" }, 404, "Policy doesn't exist"],
  ])("refuses %s", async (_l, api, client, body, status, message) => {
    const r = await call(url(api, client), { method: "PUT", headers: gw, body: body as object });
    expect(r).toMatchObject({ status, body: gwError(message) });
    expect(sb.inspect.store.oauthClients.get("petstore-v1\0petstore-mobile-app")?.redirect_uri).toBe("https://old.example.com/callback");
  });
});

describe("operation 7: POST /gw/org/keys/{keyID}", () => {
  const url = (query = ""): string => `${sb.urls.gateway}/gw/org/keys/org-1${query}`;

  it("creates or overwrites the key, the server setting last_updated", async () => {
    const r = await call(url(), { method: "POST", headers: gw, body: { rate: 10, per: 1, quota_max: 100, quota_renewal_rate: 3600 } });
    expect(r).toMatchObject({ status: 200, body: { key: "org-1", status: "ok", action: "added" } });
    const second = await call(url(), { method: "POST", headers: gw, body: { rate: 20 } });
    expect(second.body).toEqual({ key: "org-1", status: "ok", action: "added" });
    const stored = sb.inspect.store.orgKeys.get("org-1")!;
    expect(stored.session).toMatchObject({ rate: 20 });
    expect(stored.session.quota_max).toBeUndefined();
    expect(Number(stored.session.last_updated)).toBeGreaterThan(1_700_000_000);
    expect(stored.writes).toBe(2);
  });

  it("resets the quota exactly when reset_quota=1, every time it is sent", async () => {
    const body = { quota_max: 100, quota_renewal_rate: 3600 };
    await call(url("?reset_quota=1"), { method: "POST", headers: gw, body });
    await call(url("?reset_quota=2"), { method: "POST", headers: gw, body });
    await call(url("?reset_quota=true"), { method: "POST", headers: gw, body });
    await call(url("?reset_quota=1"), { method: "POST", headers: gw, body });
    const stored = sb.inspect.store.orgKeys.get("org-1")!;
    expect(stored.quotaResets).toBe(2);
    expect(Number(stored.session.quota_renews)).toBeGreaterThan(Date.now() / 1000 + 3500);
  });

  it.each([
    ["a body that is not JSON", "{"],
    ["a field of the wrong type", JSON.stringify({ rate: "fast" })],
    ["a JSON array", "[]"],
  ])("refuses %s with 400 Request malformed", async (_l, body) => {
    const r = await call(url(), { method: "POST", headers: gw, body });
    expect(r).toMatchObject({ status: 400, body: gwError("Request malformed") });
    expect(sb.inspect.store.orgKeys.size).toBe(0);
  });
});

describe("portal credential", () => {
  it.each([
    ["PUT", "/oauth-providers/1/client-types/10"],
    ["POST", "/products"],
    ["POST", "/webhooks"],
    ["PUT", "/webhooks/x"],
  ])("answers 401 with an errors body to %s %s without the key", async (method, p) => {
    for (const headers of [{}, { authorization: "wrong" }]) {
      const r = await call(`${sb.urls.portal}${p}`, { method, headers, body: {} });
      expect(r).toMatchObject({ status: 401, body: { errors: ["Not authorised"] } });
    }
  });
});

describe("operation 3: PUT client types", () => {
  const url = (p: string | number, c: string | number): string => `${sb.urls.portal}/oauth-providers/${p}/client-types/${c}`;
  const valid = { Name: "Web", ResponseTypes: "code, token", GrantType: "authorization_code,refresh_token", TokenEndpointAuthMethod: "client_secret_post" };

  it("updates a client type of a regular provider as sent", async () => {
    const r = await call(url(1, 10), { method: "PUT", headers: portal, body: valid });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({ ...valid, ID: 10, Description: "" });
    const body = r.body as { CreatedAt: string; UpdatedAt: string };
    expect(body.CreatedAt).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
    expect(body.UpdatedAt).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
  });

  it("derives the OAuth fields from IdpAppType for an app-type provider: the answer differs from the request", async () => {
    const r = await call(url(3, 31), { method: "PUT", headers: portal, body: { ...valid, IdpAppType: "service" } });
    expect(r.status).toBe(200);
    expect(r.body).toMatchObject({
      Name: "Web",
      IdpAppType: "service",
      TokenEndpointAuthMethod: "client_secret_basic",
      GrantType: "client_credentials",
      ResponseTypes: "token",
    });
  });

  it.each([
    ["non-integer ids", "one", 10, valid, 400],
    ["an unknown provider", 99, 10, valid, 404],
    ["an unknown client type", 1, 99, valid, 404],
    ["a missing Name", 1, 10, { ...valid, Name: undefined }, 400],
    ["a missing GrantType", 1, 10, { ...valid, GrantType: undefined }, 400],
    ["an unknown response type", 1, 10, { ...valid, ResponseTypes: "code,id_token" }, 400],
    ["an empty grant list", 1, 10, { ...valid, GrantType: " , " }, 400],
    ["an app-type provider without IdpAppType", 3, 31, valid, 400],
    ["a body that is not JSON", 1, 10, "x", 400],
  ])("refuses %s", async (_l, p, c, body, status) => {
    const r = await call(url(p, c), { method: "PUT", headers: portal, body: body as object });
    expect(r.status).toBe(status);
    expect((r.body as { errors: string[] }).errors).toHaveLength(1);
    expect(sb.inspect.store.providers.get(1)!.clientTypes.get(10)!.Name).toBe("Web applications");
  });

  it("names the unknown provider as the reference does", async () => {
    expect((await call(url(99, 10), { method: "PUT", headers: portal, body: valid })).body).toEqual({ errors: ["Identity Provider Not found"] });
  });
});

describe("operation 5: POST /products", () => {
  const product = {
    Name: "Storefront APIs",
    ProviderID: 1,
    IsDocumentationOnly: false,
    APIDetails: [{ APIID: "petstore-v1", Description: "pets" }],
    Catalogues: [1],
    Tags: [3],
    Templates: [1],
    Scopes: "read",
  };

  it("creates a product with a server-assigned id and names for the ids it was given", async () => {
    const r = await call(`${sb.urls.portal}/products`, { method: "POST", headers: portal, body: product });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({
      Name: "Storefront APIs",
      Catalogues: ["Public"],
      Tags: ["pets"],
      Templates: ["default-oauth"],
      Path: "storefront-apis",
      IsDocumentationOnly: false,
      SpecDetails: null,
    });
    expect((r.body as { ID: number }).ID).toEqual(expect.any(Number));
    expect((r.body as { APIDetails: unknown[] }).APIDetails[0]).toMatchObject({
      APIID: "petstore-v1",
      ListenPath: "/petstore/",
      Name: "Swagger Petstore",
      Status: true,
      APIType: "oas",
    });
    const second = await call(`${sb.urls.portal}/products`, { method: "POST", headers: portal, body: product });
    expect((second.body as { ID: number }).ID).not.toBe((r.body as { ID: number }).ID);
    expect(sb.inspect.store.products.size).toBe(2); // not idempotent
  });

  it.each([
    ["no Name", { ...product, Name: undefined }],
    ["a string ProviderID", { ...product, ProviderID: "1" }],
    ["no IsDocumentationOnly", { ...product, IsDocumentationOnly: undefined }],
    ["an unknown API", { ...product, APIDetails: [{ APIID: "ghost" }] }],
    ["an unknown catalogue", { ...product, Catalogues: [77] }],
    ["a wrong type", { ...product, Feature: "yes" }],
  ])("answers 422 to %s and creates nothing", async (_l, body) => {
    const r = await call(`${sb.urls.portal}/products`, { method: "POST", headers: portal, body });
    expect(r.status).toBe(422);
    expect(sb.inspect.store.products.size).toBe(0);
  });
});

describe("operations 9 and 8: portal webhooks", () => {
  const hook = { Name: "CRM", URL: "https://crm.example.com/hook", Method: "POST", Timeout: 5, Events: ["AccessRequestApproved"] };

  it("creates (201, string id, timestamps) and updates (200) a webhook; Headers are answer-only", async () => {
    const created = await call(`${sb.urls.portal}/webhooks`, { method: "POST", headers: portal, body: { ...hook, Headers: [{ Name: "x", Value: "y" }] } });
    expect(created.status).toBe(201);
    const body = created.body as { ID: string; Headers: unknown[]; CreatedAt: string };
    expect(typeof body.ID).toBe("string");
    expect(body.Headers).toEqual([]);
    expect(body.CreatedAt).toMatch(/^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/);
    const updated = await call(`${sb.urls.portal}/webhooks/${body.ID}`, {
      method: "PUT",
      headers: portal,
      body: { ...hook, Timeout: 9, Events: ["UserRegistered"] },
    });
    expect(updated).toMatchObject({ status: 200, body: { ID: body.ID, Timeout: 9, Events: ["UserRegistered"], CreatedAt: body.CreatedAt } });
    expect(sb.inspect.store.portalWebhooks.size).toBe(1);
  });

  it("answers 404 to an unknown id and 422 to invalid webhooks", async () => {
    expect((await call(`${sb.urls.portal}/webhooks/ghost`, { method: "PUT", headers: portal, body: hook })).status).toBe(404);
    for (const bad of [
      { ...hook, Events: ["KeyRotated"] },
      { ...hook, Timeout: -1 },
      { ...hook, Timeout: 1.5 },
      { ...hook, Method: "FETCH" },
      { ...hook, URL: "relative" },
      { ...hook, Name: "" },
    ]) {
      expect((await call(`${sb.urls.portal}/webhooks`, { method: "POST", headers: portal, body: bad })).status).toBe(422);
    }
    expect(sb.inspect.store.portalWebhooks.size).toBe(0);
  });
});

describe("operation 10: POST /api/hooks", () => {
  const hook = { name: "alerts", method: "POST", target_path: "https://chat.example.com/x", header_map: { "x-token": "t" } };
  const post = (headers: Record<string, string>, body: unknown): ReturnType<typeof call> =>
    call(`${sb.urls.dashboard}/api/hooks`, { method: "POST", headers, body: body as object });

  it("creates a hook, answering with no id, and refuses a duplicate with 409", async () => {
    expect(await post(dash, hook)).toMatchObject({ status: 200, body: { Status: "OK", Message: "Webhook created", Meta: null } });
    expect((await post(dash, hook)).status).toBe(409);
    expect(sb.inspect.store.dashboardHooks).toHaveLength(1);
  });

  it("answers the reference's codes: 401, 403 for non-JSON, 400 for invalid objects", async () => {
    expect(await post({}, hook)).toMatchObject({ status: 401, body: { Status: "Error", Message: "Not authorised", Meta: null } });
    expect(await post({ authorization: "test-dash-token" }, hook)).toMatchObject({ status: 401 });
    expect(await post(dash, "not json")).toMatchObject({ status: 403, body: { Message: "Request body malformed." } });
    expect(await post(dash, { ...hook, header_map: { a: 1 } })).toMatchObject({ status: 403, body: { Message: "Request body malformed." } });
    for (const bad of [{ method: "POST" }, { target_path: "x" }, { ...hook, method: "FETCH" }, null]) {
      expect(await post(dash, bad)).toMatchObject({ status: 400, body: { Message: "Webhook object validation failed." } });
    }
    expect(sb.inspect.store.dashboardHooks).toHaveLength(0);
  });
});

describe("operation 6: POST /llm-settings", () => {
  it("creates settings with a decimal server id, type llm-settings whatever was sent, zero values filled in", async () => {
    const body = { data: { type: "something-else", attributes: { model_name: "m", temperature: 7.5, seed: 4 } } };
    const r = await call(`${sb.urls.llm}/llm-settings`, { method: "POST", headers: llm, body });
    expect(r.status).toBe(201);
    expect(r.body).toMatchObject({ data: { type: "llm-settings", attributes: { ...body.data.attributes, top_k: 0, system_prompt: "" } } });
    expect((r.body as { data: { id: string } }).data.id).toMatch(/^\d+$/);
  });

  it("answers 401 and 400 in the LLM service's formats", async () => {
    expect(await call(`${sb.urls.llm}/llm-settings`, { method: "POST", body: {} })).toMatchObject({ status: 401, body: { error: "Unauthorized" } });
    const bad = await call(`${sb.urls.llm}/llm-settings`, { method: "POST", headers: llm, body: "{nope" });
    expect(bad).toMatchObject({ status: 400, body: { errors: [{ title: "Bad Request" }] } });
    expect(sb.inspect.store.llmSettings.size).toBe(0);
  });
});
