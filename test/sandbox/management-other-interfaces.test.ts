/**
 * Contract tests of the sandbox's management operations beyond the gateway's, over real HTTP:
 * the portal's (its credential; operations 3, 5, 9 and 8), the dashboard's (10) and the LLM
 * service's (6) — each one's success, its documented errors, and auth.
 */
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { call, dash, llm, portal, testSandbox } from "../helpers/sandbox.js";

let sb: SandboxHandle;
beforeAll(async () => {
  sb = await testSandbox();
});
afterAll(async () => sb.stop());
beforeEach(() => sb.inspect.reset());

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
