/** Contract rows: the portal (operations 3, 5, 8, 9) and its event deliveries. */
import { expect } from "vitest";
import { portalEventTypes } from "../../../src/contract/operations.js";
import { anyString, anyNumber, matching } from "./table.js";
import type { Row, Send } from "./table.js";

const P = "Portal (operations 3, 5, 8, 9: under `{portal_api_url}`)";
const OP3 = "3. PUT `/oauth-providers/{provider_id}/client-types/{client_type_id}`";
const OP5 = "5. POST `/products`";
const WH = "8, 9. Webhooks: POST `/webhooks`, PUT `/webhooks/{webhook_id}`";

const clientType = (provider: string | number, type: string | number, body: unknown, auth?: Send["auth"]): Send => ({
  method: "PUT",
  path: `/portal/api/oauth-providers/${provider}/client-types/${type}`,
  body,
  ...(auth === undefined ? {} : { auth }),
});
const valid = { Name: "Web", ResponseTypes: "code", GrantType: "authorization_code,refresh_token", TokenEndpointAuthMethod: "client_secret_post" };
const product = (body: unknown): Send => ({ method: "POST", path: "/portal/api/products", body });
const regular = { Name: "Storefront", ProviderID: 1, IsDocumentationOnly: false, APIDetails: [{ APIID: "petstore-v1" }] };
const hook = { Name: "CRM", URL: "https://crm.example.com/hook", Method: "POST", Timeout: 5, Events: ["AccessRequestApproved"] };
const createHook = (body: unknown): Send => ({ method: "POST", path: "/portal/api/webhooks", body });
const timestamp = /^\d{4}-\d{2}-\d{2} \d{2}:\d{2}$/;
const unchanged: Row["after"] = ({ sb }) => expect(sb.inspect.store.providers.get(1)!.clientTypes.get(10)!.Name).toBe("Web applications");

export const portalRows: Row[] = [
  { section: P, quote: "Credential: `Authorization: <API_KEY>`", case: "the key", send: product(regular), expect: { status: 201 } },
  {
    section: P,
    quote: "missing or wrong → 401 with an `errors` body",
    case: "missing",
    send: { ...product(regular), auth: "none" },
    expect: { status: 401, body: { errors: ["Not authorised"] } },
    after: ({ sb }) => expect(sb.inspect.store.products.size).toBe(0),
  },
  {
    section: P,
    quote: "missing or wrong → 401 with an `errors` body (the exact text is not documented",
    case: "wrong",
    send: clientType(1, 10, valid, { authorization: "wrong" }),
    expect: { status: 401, body: { errors: ["Not authorised"] } },
  },
  {
    section: P,
    quote: 'the sandbox uses `{"errors":["Not authorised"]}`)',
    send: { ...createHook(hook), auth: "none" },
    expect: { status: 401, body: { errors: ["Not authorised"] } },
  },
  {
    section: P,
    quote: 'Errors: `{"errors":["<text>", ...]}`.',
    send: clientType(99, 10, valid),
    expect: { status: 404, body: { errors: ["Identity Provider Not found"] } },
  },
  {
    section: P,
    quote: "Validation failures → **422**",
    send: createHook({ ...hook, Events: ["KeyRotated"] }),
    expect: { status: 422 },
    after: (_w, a) => expect((a.body as { errors: string[] }).errors).toHaveLength(1),
  },
  { section: P, quote: "unknown ids → 404.", send: { method: "PUT", path: "/portal/api/webhooks/ghost", body: hook }, expect: { status: 404 } },
  {
    section: P,
    quote: "Timestamps `CreatedAt`/`UpdatedAt`: `YYYY-MM-DD HH:MM`.",
    send: createHook(hook),
    expect: { status: 201 },
    after: (_w, a) => expect(a.body).toMatchObject({ CreatedAt: matching(timestamp), UpdatedAt: matching(timestamp) }),
  },

  { section: OP3, quote: "Both ids are integers (anything else → 400).", send: clientType("one", 10, valid), expect: { status: 400 }, after: unchanged },
  {
    section: OP3,
    quote: "Both ids are integers (anything else → 400).",
    case: "the client type's id",
    send: clientType(1, "1.5", valid),
    expect: { status: 400 },
    after: unchanged,
  },
  {
    section: OP3,
    quote: "Unknown provider → 404 `Identity Provider Not found`",
    send: clientType(99, 10, valid),
    expect: { status: 404, body: { errors: ["Identity Provider Not found"] } },
  },
  {
    section: OP3,
    quote: "unknown client type → 404.",
    send: clientType(1, 99, valid),
    expect: { status: 404 },
    after: ({ sb }) => expect(sb.inspect.store.providers.get(1)!.clientTypes.has(99)).toBe(false),
  },
  {
    section: OP3,
    quote: "Required: `Name`, `ResponseTypes`, `GrantType`.",
    case: "Name",
    send: clientType(1, 10, { ...valid, Name: undefined }),
    expect: { status: 400 },
    after: unchanged,
  },
  {
    section: OP3,
    quote: "Required: `Name`, `ResponseTypes`, `GrantType`.",
    case: "ResponseTypes",
    send: clientType(1, 10, { ...valid, ResponseTypes: undefined }),
    expect: { status: 400 },
    after: unchanged,
  },
  {
    section: OP3,
    quote: "Violations → 400.",
    case: "GrantType, and values outside the contract's lists",
    prepare: [clientType(1, 10, { ...valid, GrantType: undefined }), clientType(1, 10, { ...valid, ResponseTypes: "code,id_token" })],
    send: clientType(1, 10, { ...valid, GrantType: " , " }),
    expect: { status: 400 },
    after: unchanged,
  },
  {
    section: OP3,
    quote: "Provider kinds: `Keycloak`, `Gluu`, `Other` and one kind that registers applications by type",
    case: "a Keycloak provider keeps what was sent",
    send: clientType(1, 10, valid),
    expect: { status: 200, match: valid },
  },
  { section: OP3, quote: "For that kind `IdpAppType` is required", send: clientType(3, 31, valid), expect: { status: 400 } },
  {
    section: OP3,
    quote:
      "the provider replaces `TokenEndpointAuthMethod`, `GrantType` and `ResponseTypes` with values derived from it: the response differs from the request.",
    send: clientType(3, 31, { ...valid, IdpAppType: "service" }),
    expect: {
      status: 200,
      match: { Name: "Web", IdpAppType: "service", TokenEndpointAuthMethod: "client_secret_basic", GrantType: "client_credentials", ResponseTypes: "token" },
    },
  },
  {
    section: OP3,
    quote: "Success → 200 with the client type, `ID`, `CreatedAt`, `UpdatedAt`.",
    send: clientType(1, 10, valid),
    expect: { status: 200, match: { ...valid, ID: 10, CreatedAt: matching(timestamp), UpdatedAt: matching(timestamp) } },
  },

  {
    section: OP5,
    quote: "Required: `Name`, `ProviderID` (integer), `IsDocumentationOnly`.",
    case: "Name",
    send: product({ ...regular, Name: undefined }),
    expect: { status: 422 },
    after: ({ sb }) => expect(sb.inspect.store.products.size).toBe(0),
  },
  {
    section: OP5,
    quote: "Required: `Name`, `ProviderID` (integer), `IsDocumentationOnly`.",
    case: "an integer ProviderID",
    prepare: [product({ ...regular, ProviderID: undefined })],
    send: product({ ...regular, ProviderID: 1.5 }),
    expect: { status: 422 },
    after: ({ sb }) => expect(sb.inspect.store.products.size).toBe(0),
  },
  {
    section: OP5,
    quote: "Required: `Name`, `ProviderID` (integer), `IsDocumentationOnly`.",
    case: "IsDocumentationOnly",
    send: product({ ...regular, IsDocumentationOnly: undefined }),
    expect: { status: 422 },
  },
  {
    section: OP5,
    quote: "Success → **201** with the product.",
    send: product({ ...regular, Catalogues: [1], Tags: [3] }),
    expect: {
      status: 201,
      match: { ID: anyNumber, Name: "Storefront", Catalogues: ["Public"], Tags: ["pets"], IsDocumentationOnly: false, SpecDetails: null },
    },
  },
  {
    section: OP5,
    quote: "Validation failure → 422.",
    case: "a wrong type, an unknown API",
    prepare: [product({ ...regular, Feature: "yes" })],
    send: product({ ...regular, APIDetails: [{ APIID: "ghost" }] }),
    expect: { status: 422 },
    after: ({ sb }) => expect(sb.inspect.store.products.size).toBe(0),
  },
  {
    section: OP5,
    quote: "Documentation-only products carry `SpecDetails: [{SpecAlias, OASUrl}]`.",
    send: product({ Name: "Docs", ProviderID: 1, IsDocumentationOnly: true, SpecDetails: [{ SpecAlias: "pets", OASUrl: "https://x/pets.yaml" }] }),
    expect: { status: 201, match: { IsDocumentationOnly: true, SpecDetails: [{ SpecAlias: "pets", OASUrl: "https://x/pets.yaml" }] } },
  },

  { section: WH, quote: "Create → **201**", send: createHook(hook), expect: { status: 201, match: { ...hook, ID: anyString } } },
  {
    section: WH,
    quote: "update → 200",
    before: ({ sb }) =>
      void sb.inspect.store.portalWebhooks.set("wh-9", { ID: "wh-9", ...hook, Headers: [], CreatedAt: "2026-01-01 00:00", UpdatedAt: "2026-01-01 00:00" }),
    send: { method: "PUT", path: "/portal/api/webhooks/wh-9", body: { ...hook, Timeout: 9 } },
    expect: { status: 200, match: { ID: "wh-9", Timeout: 9, CreatedAt: "2026-01-01 00:00" } },
    after: ({ sb }) => expect(sb.inspect.store.portalWebhooks.size).toBe(1),
  },
  {
    section: WH,
    quote: "unknown id → 404",
    send: { method: "PUT", path: "/portal/api/webhooks/ghost", body: hook },
    expect: { status: 404 },
    after: ({ sb }) => expect(sb.inspect.store.portalWebhooks.size).toBe(0),
  },
  {
    section: WH,
    quote: "validation failure → 422.",
    case: "Timeout, Method, URL, Name",
    prepare: [createHook({ ...hook, Timeout: 1.5 }), createHook({ ...hook, Method: "FETCH" }), createHook({ ...hook, URL: "relative" })],
    send: createHook({ ...hook, Name: "" }),
    expect: { status: 422 },
    after: ({ sb }) => expect(sb.inspect.store.portalWebhooks.size).toBe(0),
  },
  {
    section: WH,
    quote: "Webhook ids are **strings**.",
    send: createHook(hook),
    expect: { status: 201 },
    after: (_w, a) => expect(typeof (a.body as { ID: unknown }).ID).toBe("string"),
  },
  {
    section: WH,
    quote: "`Headers` appear in responses only",
    send: createHook({ ...hook, Headers: [{ Name: "x", Value: "y" }] }),
    expect: { status: 201, match: { Headers: [] } },
  },
  {
    section: WH,
    quote: "they are managed through a separate sub-resource (`/webhooks/{id}/headers`) that the contract does not include.",
    before: ({ sb }) => void sb.inspect.store.portalWebhooks.set("wh-9", { ID: "wh-9", ...hook, Headers: [] }),
    send: { method: "POST", path: "/portal/api/webhooks/wh-9/headers", body: { Name: "x", Value: "y" } },
    expect: { status: 404 },
  },
  {
    section: WH,
    quote: "Event types the portal emits:",
    send: createHook({ ...hook, Events: [...portalEventTypes] }),
    expect: { status: 201, match: { Events: [...portalEventTypes] } },
  },
  {
    section: WH,
    quote: "A delivery is an HTTP request with the webhook's `Method`, to its `URL`, with its headers",
    before: ({ sb, upstream }) =>
      void sb.inspect.store.portalWebhooks.set("wh-1", {
        ID: "wh-1",
        Name: "n",
        URL: `${upstream.url}/delivered`,
        Method: "PUT",
        Timeout: 5,
        Events: ["UserRegistered"],
        Headers: [{ ID: "h1", Name: "x-hook", Value: "v" }],
      }),
    send: { method: "POST", path: "/__sandbox/events", body: { event: "UserRegistered", message: { user: "u-1" } } },
    expect: { status: 200, body: { deliveries: [{ webhookId: "wh-1", status: 200 }] } },
    after: ({ upstream }) => {
      const [got] = upstream.received;
      expect(got).toMatchObject({ method: "PUT", url: "/delivered", headers: { "x-hook": "v" } });
      const body = JSON.parse(got!.body) as { Event: string; Message: unknown; Timestamp: string };
      expect(body).toEqual({ Event: "UserRegistered", Message: { user: "u-1" }, Timestamp: anyString });
      expect(new Date(body.Timestamp).toISOString()).toBe(body.Timestamp);
    },
  },
  {
    section: WH,
    quote: "giving up after `Timeout` seconds",
    before: ({ sb, upstream }) =>
      void sb.inspect.store.portalWebhooks.set("wh-2", {
        ID: "wh-2",
        Name: "slow",
        URL: `${upstream.url}/slow?delay=2500`,
        Method: "POST",
        Timeout: 1,
        Events: ["PasswordReset"],
        Headers: [],
      }),
    send: { method: "POST", path: "/__sandbox/events", body: { event: "PasswordReset" } },
    expect: { status: 200, match: { deliveries: [{ webhookId: "wh-2", error: anyString }] } },
  },
  {
    section: WH,
    quote: 'its body is `{"Event":"<type>","Message":{...},"Timestamp":"<RFC 3339>"}`.',
    before: ({ sb, upstream }) =>
      void sb.inspect.store.portalWebhooks.set("wh-3", {
        ID: "wh-3",
        Name: "n",
        URL: `${upstream.url}/b`,
        Method: "POST",
        Timeout: 5,
        Events: ["CredentialRegistered"],
        Headers: [],
      }),
    send: { method: "POST", path: "/__sandbox/events", body: { event: "CredentialRegistered", message: { id: 1 } } },
    expect: { status: 200 },
    after: ({ upstream }) => expect(Object.keys(JSON.parse(upstream.received[0]!.body) as object)).toEqual(["Event", "Message", "Timestamp"]),
  },
];
