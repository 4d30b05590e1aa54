/** Contract rows: the dashboard (operation 10), LLM settings (operation 6), what no interface offers. */
import { expect } from "vitest";
import { anyString, matching } from "./table.js";
import type { Row, Send } from "./table.js";

const D = "Dashboard (operation 10: POST `{base_url}/api/hooks`)";
const L = "LLM settings (operation 6: POST `{llm_api_url}/llm-settings`)";
const N = "What none of the interfaces offers";

const hook = { name: "alerts", method: "POST", target_path: "https://chat.example.com/x", header_map: { "x-token": "t" } };
const dashboard = (body: unknown, auth?: Send["auth"]): Send => ({ method: "POST", path: "/api/hooks", body, ...(auth === undefined ? {} : { auth }) });
const dashError = (Message: string): object => ({ Status: "Error", Message, Meta: null });
const settings = (body: unknown, auth?: Send["auth"]): Send => ({
  method: "POST",
  path: "/llm/api/llm-settings",
  body,
  ...(auth === undefined ? {} : { auth }),
});
const attrs = (attributes: object): object => ({ data: { type: "llm-settings", attributes } });
const zero = {
  model_name: "",
  system_prompt: "",
  temperature: 0,
  top_p: 0,
  repetition_penalty: 0,
  max_tokens: 0,
  max_length: 0,
  min_length: 0,
  top_k: 0,
  seed: 0,
  stop_words: null,
  metadata: null,
};
const noSettings: Row["after"] = ({ sb }) => expect(sb.inspect.store.llmSettings.size).toBe(0);
const wrongType: Array<[string, unknown]> = [
  ["model_name", 5],
  ["system_prompt", true],
  ["temperature", "hot"],
  ["top_p", [1]],
  ["repetition_penalty", {}],
  ["max_tokens", 0.5],
  ["max_length", 0.5],
  ["min_length", 2.25],
  ["top_k", "3"],
  ["seed", 0.5],
  ["stop_words", "stop"],
  ["stop_words", [1]],
];

export const otherRows: Row[] = [
  {
    section: D,
    quote: "Credential: `Authorization: Bearer <TOKEN>`",
    case: "without Bearer",
    send: dashboard(hook, { authorization: "test-dash-token" }),
    expect: { status: 401 },
  },
  {
    section: D,
    quote: 'missing or wrong → 401 `{"Status":"Error","Message":"Not authorised","Meta":null}`.',
    send: dashboard(hook, "none"),
    expect: { status: 401, body: dashError("Not authorised") },
    after: ({ sb }) => expect(sb.inspect.store.dashboardHooks).toHaveLength(0),
  },
  {
    section: D,
    quote: "Body that is not JSON → 403 `Request body malformed.`",
    send: dashboard("not json"),
    expect: { status: 403, body: dashError("Request body malformed.") },
  },
  {
    section: D,
    quote: "Body that is not JSON → 403 `Request body malformed.`",
    case: "JSON that does not decode into a hook (a member of the wrong type)",
    send: dashboard({ ...hook, header_map: { a: 1 } }),
    expect: { status: 403, body: dashError("Request body malformed.") },
  },
  {
    section: D,
    quote: "missing `method` or `target_path`, or a method outside DELETE, GET, PUT, POST, PATCH → 400 `Webhook object validation failed.`",
    case: "missing method",
    send: dashboard({ target_path: "x" }),
    expect: { status: 400, body: dashError("Webhook object validation failed.") },
  },
  {
    section: D,
    quote: "missing `method` or `target_path`",
    case: "missing target_path, and null (an empty hook)",
    prepare: [dashboard({ method: "POST" })],
    send: dashboard(null),
    expect: { status: 400, body: dashError("Webhook object validation failed.") },
    after: ({ sb }) => expect(sb.inspect.store.dashboardHooks).toHaveLength(0),
  },
  {
    section: D,
    quote: "or a method outside DELETE, GET, PUT, POST, PATCH",
    send: dashboard({ ...hook, method: "FETCH" }),
    expect: { status: 400, body: dashError("Webhook object validation failed.") },
  },
  {
    section: D,
    quote: "a hook with the same `name`, `method` and `target_path` as an existing one → 409: so sending the same create twice cannot make two objects",
    prepare: [dashboard(hook)],
    send: dashboard({ ...hook, header_map: { other: "headers" } }),
    expect: { status: 409 },
    after: ({ sb }) => expect(sb.inspect.store.dashboardHooks).toHaveLength(1),
  },
  {
    section: D,
    quote: "a hook with the same `name`, `method` and `target_path`",
    case: "another name is another hook",
    prepare: [dashboard(hook)],
    send: dashboard({ ...hook, name: "other" }),
    expect: { status: 200 },
    after: ({ sb }) => expect(sb.inspect.store.dashboardHooks).toHaveLength(2),
  },
  {
    section: D,
    quote: "and a 409 after a create whose answer was lost means that create happened.",
    before: ({ sb }) => void sb.inspect.setFaults({ lostResponseRate: 1, interfaces: ["dashboard"] }),
    prepare: [dashboard(hook), ({ sb }) => void sb.inspect.setFaults({ lostResponseRate: 0 })],
    send: dashboard(hook),
    expect: { status: 409 },
    after: ({ sb }) => expect(sb.inspect.store.dashboardHooks).toHaveLength(1),
  },
  {
    section: D,
    quote: "`header_map: null` is accepted (no headers).",
    send: dashboard({ ...hook, header_map: null }),
    expect: { status: 200 },
    after: ({ sb }) => expect(sb.inspect.store.dashboardHooks).toHaveLength(1),
  },
  {
    section: D,
    quote: 'Success → 200 `{"Status":"OK","Message":"Webhook created","Meta":null}`: the response carries **no id** of the created hook.',
    send: dashboard(hook),
    expect: { status: 200, body: { Status: "OK", Message: "Webhook created", Meta: null } },
  },

  {
    section: L,
    quote:
      "the service splits the header on a space and accepts it only when it has **exactly two parts**, taking the key from the second: `Authorization: Bearer <API_KEY>`.",
    send: settings({}, { authorization: "Bearer test-llm-key" }),
    expect: { status: 201 },
  },
  {
    section: L,
    quote: "Credential: `Authorization: <scheme> <API_KEY>`",
    case: "the scheme's word is not checked: another one with the right key",
    send: settings({}, { authorization: "Token test-llm-key" }),
    expect: { status: 201 },
  },
  {
    section: L,
    quote: "accepts it only when it has **exactly two parts**",
    case: "three parts",
    send: settings({}, { authorization: "Bearer test-llm-key x" }),
    expect: { status: 401, body: { error: "Unauthorized" } },
    after: noSettings,
  },
  {
    section: L,
    quote: 'A bare key (one part), a missing header or a wrong key → 401 `{"error":"Unauthorized"}`.',
    case: "a bare key",
    send: settings({}, { authorization: "test-llm-key" }),
    expect: { status: 401, body: { error: "Unauthorized" } },
    after: noSettings,
  },
  {
    section: L,
    quote: "a missing header or a wrong key → 401",
    case: "missing",
    send: settings({}, "none"),
    expect: { status: 401, body: { error: "Unauthorized" } },
    after: noSettings,
  },
  {
    section: L,
    quote: "a missing header or a wrong key → 401",
    case: "wrong key",
    send: settings({}, { authorization: "Bearer wrong" }),
    expect: { status: 401, body: { error: "Unauthorized" } },
    after: noSettings,
  },
  {
    section: L,
    quote: 'Body that is not JSON, or an attribute of the wrong JSON type → 400 `{"errors":[{"title":"Bad Request","detail":"<text>"}]}`.',
    send: settings("{nope"),
    expect: { status: 400, match: { errors: [{ title: "Bad Request", detail: anyString }] } },
    after: noSettings,
  },
  ...wrongType.map(([name, value]): Row => ({
    section: L,
    quote: "Attribute types: `model_name`, `system_prompt` strings",
    case: `${name}: ${JSON.stringify(value)} → 400`,
    send: settings(attrs({ [name]: value })),
    expect: { status: 400, match: { errors: [{ title: "Bad Request" }] } },
    after: noSettings,
  })),
  {
    section: L,
    quote: "`temperature`, `top_p`, `repetition_penalty` numbers",
    send: settings(attrs({ temperature: 0.7, top_p: 1, repetition_penalty: 1.1 })),
    expect: { status: 201, match: { data: { attributes: { temperature: 0.7, top_p: 1, repetition_penalty: 1.1 } } } },
  },
  {
    section: L,
    quote: "`max_tokens`, `max_length`, `min_length`, `top_k`, `seed` **integers** (0.5 → 400)",
    send: settings(attrs({ max_tokens: 0.5 })),
    expect: { status: 400 },
    after: noSettings,
  },
  {
    section: L,
    quote: "`stop_words` an array of strings.",
    send: settings(attrs({ stop_words: ["a", "b"] })),
    expect: { status: 201, match: { data: { attributes: { stop_words: ["a", "b"] } } } },
  },
  {
    section: L,
    quote: "Ranges are not checked.",
    send: settings(attrs({ temperature: -40, top_k: 1_000_000_000, max_length: -1 })),
    expect: { status: 201, match: { data: { attributes: { temperature: -40, top_k: 1_000_000_000, max_length: -1 } } } },
  },
  {
    section: L,
    quote: "`{}` is accepted (201, every attribute at its zero value).",
    send: settings({}),
    expect: { status: 201, match: { data: { type: "llm-settings", attributes: zero } } },
  },
  {
    section: L,
    quote: 'Success → **201** `{"data":{"type":"llm-settings","id":"<id>","attributes":{...}}}`',
    send: settings(attrs({ model_name: "m" })),
    expect: { status: 201 },
    after: (_w, a) => expect(Object.keys((a.body as { data: object }).data).sort()).toEqual(["attributes", "id", "type"]),
  },
  {
    section: L,
    quote: "`type` is always `llm-settings` whatever the request said",
    send: settings({ data: { type: "chat-settings", attributes: {} } }),
    expect: { status: 201, match: { data: { type: "llm-settings" } } },
  },
  {
    section: L,
    quote: "`id` is a decimal number written as a string",
    prepare: [settings({})],
    send: settings({}),
    expect: { status: 201, match: { data: { id: matching(/^\d+$/) } } },
    after: ({ sb }) => expect(sb.inspect.store.llmSettings.size).toBe(2),
  },
  {
    section: L,
    quote: "and the attributes come back with their zero values filled in.",
    send: settings(attrs({ model_name: "m", seed: 7 })),
    expect: { status: 201, match: { data: { attributes: { ...zero, model_name: "m", seed: 7 } } } },
  },
  {
    section: L,
    quote: "The service also has a `system_prompt` attribute (string).",
    send: settings(attrs({ system_prompt: "be brief" })),
    expect: { status: 201, match: { data: { attributes: { system_prompt: "be brief" } } } },
  },

  {
    section: N,
    quote: "No read operations, and no delete operations, are part of the contract.",
    case: "gateway",
    prepare: [
      { method: "GET", path: "/gw/org/keys/k" },
      { method: "GET", path: "/gw/org/keys" },
    ],
    send: { method: "DELETE", path: "/gw/apis/oas/petstore-v1" },
    expect: { status: 405 },
    after: ({ sb }) => expect(sb.inspect.store.apis.has("petstore-v1")).toBe(true),
  },
  {
    section: N,
    quote: "No read operations, and no delete operations, are part of the contract.",
    case: "portal, dashboard, LLM settings",
    prepare: [
      { method: "GET", path: "/portal/api/products" },
      { method: "GET", path: "/api/hooks" },
      { method: "GET", path: "/llm/api/llm-settings" },
    ],
    send: { method: "DELETE", path: "/portal/api/webhooks/x" },
    expect: { status: 405 },
  },
  {
    section: N,
    quote: "No update operation for API products, LLM settings or dashboard webhooks",
    prepare: [
      { method: "PUT", path: "/llm/api/llm-settings/1", body: {} },
      { method: "PUT", path: "/api/hooks/1", body: hook },
    ],
    send: { method: "PUT", path: "/portal/api/products/1", body: {} },
    expect: { status: 404 },
  },
  {
    section: N,
    quote: "No create operation for API definitions, OAuth clients or client types.",
    prepare: [
      { method: "POST", path: "/gw/oauth/clients/petstore-v1", body: {} },
      { method: "POST", path: "/portal/api/oauth-providers/1/client-types", body: {} },
    ],
    send: { method: "POST", path: "/gw/apis/oas", body: { openapi: "3.1.0", info: { title: "t", version: "1" }, paths: {} } },
    expect: { status: 405 },
    after: ({ sb }) =>
      expect(
        [...sb.inspect.store.apis.values()].filter((a) => a.document?.info !== undefined && (a.document.info as { title?: string }).title === "t"),
      ).toEqual([]),
  },
  {
    section: N,
    quote: "Creates 5, 6 and 9 are not idempotent: sending one twice makes two objects.",
    prepare: [
      { method: "POST", path: "/portal/api/products", body: { Name: "P", ProviderID: 1, IsDocumentationOnly: false } },
      { method: "POST", path: "/portal/api/products", body: { Name: "P", ProviderID: 1, IsDocumentationOnly: false } },
      settings({}),
      settings({}),
      { method: "POST", path: "/portal/api/webhooks", body: { Name: "W", URL: "https://x", Method: "POST" } },
    ],
    send: { method: "POST", path: "/portal/api/webhooks", body: { Name: "W", URL: "https://x", Method: "POST" } },
    expect: { status: 201 },
    after: ({ sb }) => expect([sb.inspect.store.products.size, sb.inspect.store.llmSettings.size, sb.inspect.store.portalWebhooks.size]).toEqual([2, 2, 2]),
  },
  { section: N, quote: "Create 10 refuses an exact duplicate with 409 (above).", prepare: [dashboard(hook)], send: dashboard(hook), expect: { status: 409 } },
];
