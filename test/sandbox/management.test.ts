/**
 * Contract tests of the sandbox's gateway operations (1, 2, 7) over real HTTP: each operation's
 * success, its documented errors (codes and bodies of docs/interface-behaviour), and auth. The
 * other interfaces' operations: management-other-interfaces.test.ts.
 */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, beforeEach, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { call, gw, testSandbox } from "../helpers/sandbox.js";
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
