/**
 * The classification rules gatesync adds around the OpenAPI diff: gateway settings (query flags
 * and the x-gw-api-gateway extension), access taken from OrgKeys and OAuthClients, and the
 * corrections of the library's misjudgements.
 */
import { describe, expect, it } from "vitest";
import { classifyUpdate } from "../../src/plan/breaking/classify.js";
import type { ClassifiedChange } from "../../src/kinds/breaking/types.js";
import { classifyOpenApi } from "../../src/kinds/breaking/openapi.js";

const brief = (changes: readonly ClassifiedChange[] | undefined): string[] => (changes ?? []).map((c) => `${c.class} ${c.path}: ${c.reason}`);
const classes = (kind: string, before: Record<string, unknown>, after: Record<string, unknown>): string[] =>
  brief(classifyUpdate(kind, before, after)?.changes);

const oas = { openapi: "3.1.0", info: { title: "T", version: "1" }, servers: [{ url: "https://up.example.com" }], paths: {} };
const ext = (e: Record<string, unknown>): Record<string, unknown> => ({ ...oas, "x-gw-api-gateway": e });

describe("gateway settings of an ApiDefinition", () => {
  it("a changed listen path or upstream breaks traffic, wherever it is set", () => {
    expect(classes("ApiDefinition", { query: { listenPath: "/pets/" }, definition: oas }, { query: { listenPath: "/animals/" }, definition: oas })).toEqual([
      "breaking query.listenPath: the listen path changed from /pets/ to /animals/: callers of the old path get 404",
    ]);
    const before = { query: {}, definition: ext({ server: { listenPath: { value: "/a/" } }, upstream: { url: "http://one" } }) };
    const after = { query: {}, definition: ext({ server: { listenPath: { value: "/a/" } }, upstream: { url: "http://two" } }) };
    expect(classes("ApiDefinition", before, after)).toEqual([
      "breaking definition.x-gw-api-gateway.upstream.url: the upstream changed from http://one to http://two: traffic goes to a different service",
    ]);
  });

  it("a first query flag makes the gateway rebuild its defaults: the listen path falls back to / and the upstream to servers[0]", () => {
    const before = { query: {}, definition: ext({ server: { listenPath: { value: "/a/" } } }) };
    const after = { query: { validateRequest: "false" }, definition: oas };
    expect(classes("ApiDefinition", before, after)).toEqual([
      "breaking query: the listen path changed from /a/ to / (the gateway's default once a query flag is given): callers of the old path get 404",
      "breaking query: the upstream set to https://up.example.com (the gateway's default once a query flag is given; the previous one is not recorded): traffic goes to a different service",
      "non-breaking query.validateRequest: request validation switched off: existing callers keep working",
    ]);
  });

  it("switching on authentication, the allow-list or request validation breaks callers; switching them off does not", () => {
    const on = { query: { authentication: "true", allowList: "1", validateRequest: "T" }, definition: { ...oas, security: [{ k: [] }] } };
    const off = { query: { authentication: "false", allowList: "0", validateRequest: "F" }, definition: { ...oas, security: [{ k: [] }] } };
    const up = classes("ApiDefinition", off, on);
    expect(up).toHaveLength(3);
    expect(up.every((l) => l.startsWith("breaking query."))).toBe(true);
    expect(up[0]).toBe("breaking query.authentication: authentication switched on: callers without valid credentials are refused (401/403)");
    expect(classes("ApiDefinition", on, off).every((l) => l.startsWith("non-breaking "))).toBe(true);
    // a value the gateway ignores (not a Go boolean) changes nothing
    expect(classes("ApiDefinition", off, { ...off, query: { ...off.query, allowList: "yes" } })).toEqual([
      'unclassified query.allowList: "yes" is not a boolean the gateway reads (1, t, true, 0, f, false…): it ignores the flag',
    ]);
  });

  it("deactivating the API breaks every caller; renaming it is an annotation; unknown extension members are unclassified", () => {
    const before = { query: {}, definition: ext({ info: { name: "A", state: { active: true } }, middleware: { x: 1 } }) };
    const after = { query: {}, definition: ext({ info: { name: "B", state: { active: false } }, middleware: { x: 2 } }) };
    expect(classes("ApiDefinition", before, after)).toEqual([
      "breaking definition.x-gw-api-gateway.info.state.active: the API switched off: deactivated: every call is refused",
      "unclassified definition.x-gw-api-gateway.middleware.x: a gateway setting gatesync does not classify changed: review it by hand",
      "annotation definition.x-gw-api-gateway.info.name: the API's display name changed",
    ]);
  });
});

describe("the OpenAPI diff, corrected", () => {
  const op = (extra: Record<string, unknown>): Record<string, unknown> => ({
    ...oas,
    paths: { "/p": { post: { responses: { "200": { description: "ok" } }, ...extra } } },
  });

  it("a required parameter or request body added to an operation that had none is breaking", () => {
    expect(brief(classifyOpenApi(op({}), op({ parameters: [{ name: "q", in: "query", required: true, schema: { type: "string" } }] })))).toEqual([
      'breaking definition.paths["/p"].post.parameters[0]: [Added] required query parameter `q`',
    ]);
    const body = { required: true, content: { "application/json": { schema: { type: "object" } } } };
    expect(brief(classifyOpenApi(op({}), op({ requestBody: body })))[0]).toMatch(
      /^breaking definition\.paths\["\/p"\]\.post\.requestBody: \[Added\] required Request Body/,
    );
  });

  it("a type replaced in a response breaks readers, unless it narrows; in a request, unless it widens", () => {
    const res = (type: string): Record<string, unknown> =>
      op({ responses: { "200": { description: "ok", content: { "application/json": { schema: { type: "object", properties: { n: { type } } } } } } } });
    expect(classifyOpenApi(res("integer"), res("string"))[0]?.class).toBe("breaking");
    expect(classifyOpenApi(res("number"), res("integer"))[0]?.class).toBe("non-breaking");
    const req = (type: string): Record<string, unknown> =>
      op({ requestBody: { content: { "application/json": { schema: { type: "object", properties: { n: { type } } } } } } });
    expect(classifyOpenApi(req("integer"), req("number"))[0]?.class).toBe("non-breaking");
    expect(brief(classifyOpenApi(req("string"), req("integer")))[0]).toContain(
      "type of `n` in the request body changed from string to integer: requests valid before are refused",
    );
  });

  it("never calls a change it cannot see compatible: an undetected change, a non-OpenAPI body and a library failure are unclassified", () => {
    // a parameter of a path item without operations (as in the corpus's parameter-object-examples.yaml): the library skips it
    const param = (type: string): Record<string, unknown> => ({
      ...oas,
      paths: {
        "/p": { parameters: [{ name: "c", in: "query", content: { "application/json": { schema: { type: "object", properties: { v: { type } } } } } }] },
      },
    });
    expect(classifyOpenApi(param("string"), param("integer")).map((c) => c.class)).toEqual(["unclassified"]);
    expect(classifyOpenApi({ swagger: "2.0" }, { swagger: "2.0", info: {} }).map((c) => c.class)).toEqual(["unclassified"]);
    const cyclic: Record<string, unknown> = { ...oas, paths: { "/p": { get: { responses: "not an object" } } } };
    expect(() => classifyOpenApi(oas, cyclic)).not.toThrow();
  });

  it("leaves its inputs untouched", () => {
    const before = op({});
    const after = op({ parameters: [{ name: "q", in: "query", schema: { type: "string" } }] });
    const copies = structuredClone([before, after]);
    classifyOpenApi(before, after);
    expect([before, after]).toEqual(copies);
  });
});

describe("access taken away", () => {
  const key = (rights: Record<string, unknown>, extra: Record<string, unknown> = {}): Record<string, unknown> => ({
    access_rights: rights,
    rate: 100,
    per: 60,
    quota_max: 1000,
    ...extra,
  });
  const shop = {
    api_id: "shop",
    versions: ["v1", "v2"],
    allowed_urls: [{ url: "/orders", methods: ["GET", "POST"] }],
    limit: { rate: 10, per: 1, quota_max: 500 },
  };

  it("an OrgKey losing an API, a version, URLs, methods, rate or quota is breaking", () => {
    expect(classes("OrgKey", key({ shop, pets: { api_id: "pets" } }), key({ shop }))).toEqual([
      "breaking access_rights.pets: access to API pets is removed: calls to it with this key are refused",
    ]);
    const narrower = { ...shop, versions: ["v2"], allowed_urls: [{ url: "/orders", methods: ["GET"] }], limit: { rate: 5, per: 1, quota_max: 100 } };
    expect(classes("OrgKey", key({ shop }), key({ shop: narrower }, { rate: 50 }))).toEqual([
      "breaking access_rights.shop.versions: no longer allowed: version v1 of API shop",
      "breaking access_rights.shop.allowed_urls: no longer allowed: POST on /orders",
      "breaking access_rights.shop.limit.rate: the rate limit is lowered from 10 per 1 s to 5 per 1 s: callers above it get 429",
      "breaking access_rights.shop.limit.quota_max: the quota is lowered from 500 to 100 requests",
      "breaking rate: the rate limit is lowered from 100 per 60 s to 50 per 60 s: callers above it get 429",
    ]);
  });

  it("an OrgKey gaining access is not breaking; deactivation, an earlier expiry or a dropped policy is", () => {
    const wider = { ...shop, allowed_urls: [], limit: { rate: 20, per: 1, quota_max: -1 } };
    expect(
      classifyUpdate("OrgKey", key({ shop }), key({ shop: wider, pets: { api_id: "pets" } }, { rate: 200 }))?.changes.every((c) => c.class === "non-breaking"),
    ).toBe(true);
    expect(
      classes("OrgKey", key({}, { apply_policies: ["gold", "silver"] }), key({}, { is_inactive: true, expires: 1_900_000_000, apply_policies: ["gold"] })),
    ).toEqual([
      "breaking is_inactive: the key is deactivated: every call with it is refused",
      "breaking expires: the key expires from now on: at 2030-03-17T17:46:40.000Z",
      "breaking apply_policies: policy silver no longer applied: the access it grants is lost",
    ]);
    expect(classifyUpdate("OrgKey", key({}, { meta_data: { a: 1 } }), key({}, { meta_data: { a: 2 } }))).toEqual({ verdict: "non-breaking", changes: [] });
  });

  it("an OAuthClient whose policy changes loses its tokens; one that gets a first policy does not", () => {
    const client = { description: "", meta_data: null, policy_id: "gold", redirect_uri: "https://app/cb" };
    expect(classes("OAuthClient", client, { ...client, policy_id: "silver" })).toEqual([
      "breaking policy_id: the policy changes from gold to silver: the gateway revokes every token issued to the client",
    ]);
    expect(classes("OAuthClient", { ...client, policy_id: { $sensitive: "0a1b" } }, client)).toEqual([
      "breaking policy_id: the policy changes from (sensitive) to gold: the gateway revokes every token issued to the client",
    ]);
    expect(classes("OAuthClient", { ...client, policy_id: "" }, client)).toEqual(["non-breaking policy_id: policy gold is set: tokens issued so far are kept"]);
    expect(classes("OAuthClient", client, { ...client, redirect_uri: "https://app/v2/cb", description: "new" })).toEqual([
      "breaking redirect_uri: the redirect URI changes from https://app/cb to https://app/v2/cb: authorisation requests with the old one are refused",
      "annotation description: the description changed",
    ]);
  });

  it("leaves other kinds unclassified", () => {
    expect(classifyUpdate("PortalWebhook", {}, { a: 1 })).toBeUndefined();
  });
});
