/** Contract rows: the gateway's general rules and operations 1, 2 and 7. */
import { expect } from "vitest";
import { anyString } from "./table.js";
import type { Row } from "./table.js";

const G = "Gateway (operations 1, 2, 4, 7: everything under `{base_url}/gw/`)";
const OP1 = "1. PATCH `/gw/apis/oas/{apiID}`";
const OP2 = "2. PUT `/gw/oauth/clients/{apiID}/{keyName}`";
const OP7 = "7. POST `/gw/org/keys/{keyID}`";

export const oas = { openapi: "3.1.0", info: { title: "Pets", version: "2" }, servers: [{ url: "http://pets.internal" }], paths: {} };
const bare = { openapi: "3.1.0", info: { title: "Bare", version: "1" }, paths: {} };
const gwError = (message: string): object => ({ status: "error", message });
const patch = (id: string, body: unknown, query = ""): Row["send"] => ({ method: "PATCH", path: `/gw/apis/oas/${id}${query}`, body });
const client = (api: string, id: string, body: unknown): Row["send"] => ({ method: "PUT", path: `/gw/oauth/clients/${api}/${id}`, body });
const orgKey = (id: string, body: unknown, query = "", method = "POST"): Row["send"] => ({ method, path: `/gw/org/keys/${id}${query}`, body });
const mobile = "petstore-v1\0petstore-mobile-app";
/** An extension the published schema accepts, with the given id (or none). */
const complete = (id: string | undefined): object => ({
  info: { ...(id === undefined ? {} : { id }), name: "Pets", state: { active: true } },
  upstream: { url: "http://pets.internal" },
  server: { listenPath: { value: "/pets/" } },
});
const refused =
  (pattern: RegExp): NonNullable<Row["after"]> =>
  (_w, a) =>
    expect((a.body as { message: string }).message).toMatch(pattern);
const op = (responses = { "200": { description: "ok" } }): object => ({ responses });
const semantic = (more: object): object => ({ ...oas, ...more });

export const gatewayRows: Row[] = [
  // general
  {
    section: G,
    quote: 'Error body: `{"status":"error","message":"<text>"}`, `Content-Type: application/json`.',
    send: patch("ghost", oas),
    expect: { status: 404, body: gwError("API not found"), headers: { "content-type": /^application\/json/ } },
  },
  {
    section: G,
    quote: 'Success body of 1 and 7: `{"key":"<id>","status":"ok","action":"<verb>"}`',
    send: orgKey("org-1", { rate: 1 }),
    expect: { status: 200, body: { key: "org-1", status: "ok", action: "added" } },
  },
  {
    section: G,
    quote: "`key_hash` only when there is one.",
    case: "an org key write has none",
    send: orgKey("org-1", {}),
    expect: { status: 200, body: { key: "org-1", status: "ok", action: "added" } },
  },
  {
    section: G,
    quote: "`action` is `added` (create), `modified` (update).",
    case: "op 1 is an update",
    send: patch("petstore-v1", oas),
    expect: { status: 200, match: { action: "modified" } },
  },
  {
    section: G,
    quote: "Admin credential: checked before any route matching.",
    case: "a wrong method on a good route, without a key",
    send: { method: "GET", path: "/gw/apis/oas/petstore-v1", auth: "none" },
    expect: { status: 403 },
  },
  {
    section: G,
    quote: "Missing or wrong `X-GW-Authorization` → **403** `Attempted administrative access with invalid or missing key!`",
    case: "missing",
    send: { ...orgKey("k", {}), auth: "none" },
    expect: { status: 403, body: gwError("Attempted administrative access with invalid or missing key!") },
    after: ({ sb }) => expect(sb.inspect.store.orgKeys.size).toBe(0),
  },
  {
    section: G,
    quote: "Missing or wrong `X-GW-Authorization` → **403**",
    case: "wrong",
    send: { ...patch("petstore-v1", oas), auth: { "x-gw-authorization": "nope" } },
    expect: { status: 403, body: gwError("Attempted administrative access with invalid or missing key!") },
  },
  { section: G, quote: "(also for paths that do not exist)", send: { method: "GET", path: "/gw/does/not/exist", auth: "none" }, expect: { status: 403 } },
  {
    section: G,
    quote: "With a good key, an unknown route → 404",
    send: { method: "GET", path: "/gw/does/not/exist" },
    expect: { status: 404, match: { status: "error" } },
  },
  {
    section: G,
    quote: "a wrong method → 405 `Method not supported`",
    send: { method: "GET", path: "/gw/apis/oas/petstore-v1" },
    expect: { status: 405, body: gwError("Method not supported") },
  },
  {
    section: G,
    quote: "a trailing slash is stripped before routing (`/gw/org/keys/acme/` is `/gw/org/keys/acme`)",
    send: orgKey("acme/", { rate: 2 }),
    expect: { status: 200, body: { key: "acme", status: "ok", action: "added" } },
    after: ({ sb }) => expect([...sb.inspect.store.orgKeys.keys()]).toEqual(["acme"]),
  },
  {
    section: G,
    quote: "a trailing slash is stripped before routing",
    case: "operation 1",
    send: patch("petstore-v1/", oas),
    expect: { status: 200, match: { key: "petstore-v1" } },
  },
  {
    section: G,
    quote: "extra segments after an id (`/gw/apis/oas/{apiID}/extra`) are an unknown route → 404",
    send: patch("petstore-v1/extra", oas),
    expect: { status: 404 },
    after: ({ sb }) => expect(sb.inspect.store.apis.get("petstore-v1")!.document).not.toEqual(oas),
  },
  {
    section: G,
    quote: "extra segments after an id",
    case: "operations 2 and 7",
    prepare: [client("petstore-v1", "petstore-mobile-app/extra", {})],
    send: orgKey("k/extra", {}),
    expect: { status: 404 },
    after: ({ sb }) => expect(sb.inspect.store.orgKeys.size).toBe(0),
  },
  {
    section: G,
    quote: "In the sandbox, a write takes effect for API traffic at once",
    prepare: [patch("echo", oas, "?listenPath=/moved/")],
    send: { method: "GET", path: "/moved/x" },
    expect: { status: 200, match: { url: "/x" } },
  },

  // operation 1
  {
    section: OP1,
    quote: "Checks, in this order:",
    case: "credential before body",
    send: { ...patch("petstore-v1", "{{{"), auth: "none" },
    expect: { status: 403 },
  },
  { section: OP1, quote: "bad credential → 403 (above)", send: { ...patch("ghost", "{{{"), auth: { "x-gw-authorization": "wrong" } }, expect: { status: 403 } },
  {
    section: OP1,
    quote: "body that is not JSON or YAML → 400 `request malformed`",
    send: patch("petstore-v1", "{not: [valid"),
    expect: { status: 400, body: gwError("request malformed") },
  },
  {
    section: OP1,
    quote: "body that is not JSON or YAML",
    case: "YAML is accepted",
    send: patch("petstore-v1", "openapi: 3.1.0\ninfo: {title: Y, version: '1'}\npaths: {}\n"),
    expect: { status: 200 },
    after: ({ sb }) => expect(sb.inspect.store.apis.get("petstore-v1")!.document).toMatchObject({ info: { title: "Y" } }),
  },
  {
    section: OP1,
    quote: "The schema checked is the OpenAPI 3.0/3.1 schema **merged with the published schema of the `x-gw-api-gateway` extension**",
    case: "a complete extension passes",
    send: patch("petstore-v1", { ...oas, "x-gw-api-gateway": complete("petstore-v1") }),
    expect: { status: 200 },
  },
  ...(
    [
      [
        "`info.name` (non-blank)",
        { ...complete("petstore-v1"), info: { id: "petstore-v1", name: " ", state: { active: true } } },
        /^x-gw-api-gateway\.info\.name/,
      ],
      ["`info.state.active`", { ...complete("petstore-v1"), info: { id: "petstore-v1", name: "P", state: {} } }, /^x-gw-api-gateway\.info\.state.*active/],
      ["`upstream.url` (a URI reference) or `upstream.loadBalancing`", { ...complete("petstore-v1"), upstream: {} }, /^x-gw-api-gateway\.upstream/],
      [
        "`upstream.url` (a URI reference)",
        { ...complete("petstore-v1"), upstream: { url: "http://bad host/" } },
        /^x-gw-api-gateway\.upstream\.url.*uri-reference/,
      ],
      [
        "`server.listenPath.value` (non-empty)",
        { ...complete("petstore-v1"), server: { listenPath: { value: "" } } },
        /^x-gw-api-gateway\.server\.listenPath\.value/,
      ],
      [
        "`enabled` inside `server.authentication` / `server.batchProcessing` when those are given",
        { ...complete("petstore-v1"), server: { listenPath: { value: "/p/" }, authentication: {} } },
        /^x-gw-api-gateway\.server\.authentication.*enabled/,
      ],
      [
        "`enabled` inside `server.authentication` / `server.batchProcessing` when those are given",
        { ...complete("petstore-v1"), server: { listenPath: { value: "/p/" }, batchProcessing: {} } },
        /^x-gw-api-gateway\.server\.batchProcessing.*enabled/,
      ],
      [
        "and so on as that schema says",
        { ...complete("petstore-v1"), server: { listenPath: { value: "/p/" }, customDomain: "x.example.com" } },
        /^x-gw-api-gateway\.server\.customDomain.*object/,
      ],
      ["when the body carries the extension it must be complete", {}, /^x-gw-api-gateway: .*info/],
    ] as const
  ).map(([quote, ext, message]): Row => ({
    section: OP1,
    quote,
    case: JSON.stringify(ext).slice(0, 80),
    send: patch("petstore-v1", { ...oas, "x-gw-api-gateway": ext }),
    expect: { status: 400, match: { status: "error" } },
    after: refused(message),
  })),
  {
    section: OP1,
    quote: 'A partial extension such as `{"info":{"id":…,"state":{"active":false}}}` → 400.',
    send: patch("petstore-v1", { ...oas, "x-gw-api-gateway": { info: { id: "petstore-v1", state: { active: false } } } }),
    expect: { status: 400, match: { status: "error" } },
    after: ({ sb }) => expect(sb.inspect.store.apis.get("petstore-v1")!.extension).toMatchObject({ info: { state: { active: true } } }),
  },
  {
    section: OP1,
    quote:
      "The document then passes the gateway's semantic checks, each a 400 with the validator's message: every security requirement names a scheme declared in `components.securitySchemes`",
    send: patch("petstore-v1", semantic({ security: [{ apiKey: [] }] })),
    expect: { status: 400 },
    after: refused(/security requirement "apiKey" is not defined/),
  },
  {
    section: OP1,
    quote: "every security requirement names a scheme declared",
    case: "in an operation",
    send: patch(
      "petstore-v1",
      semantic({
        components: { securitySchemes: { key: { type: "apiKey", in: "header", name: "k" } } },
        paths: { "/p": { get: { ...op(), security: [{ other: [] }] } } },
      }),
    ),
    expect: { status: 400 },
    after: refused(/"other" of GET \/p is not defined/),
  },
  {
    section: OP1,
    quote: "every `{param}` of a path has a path parameter declared for each of its operations",
    send: patch(
      "petstore-v1",
      semantic({ paths: { "/p/{id}": { get: op(), put: { ...op(), parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }] } } } }),
    ),
    expect: { status: 400 },
    after: refused(/GET \/p\/\{id\} must define exactly all path parameters \(missing: \[id\]\)/),
  },
  {
    section: OP1,
    quote: "every `{param}` of a path has a path parameter declared",
    case: "declared on the path item counts for each operation",
    send: patch(
      "petstore-v1",
      semantic({ paths: { "/p/{id}": { parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }], get: op(), put: op() } } }),
    ),
    expect: { status: 200 },
  },
  {
    section: OP1,
    quote: "(and no undeclared path parameter exists)",
    send: patch(
      "petstore-v1",
      semantic({ paths: { "/p": { get: { ...op(), parameters: [{ name: "id", in: "path", required: true, schema: { type: "string" } }] } } } }),
    ),
    expect: { status: 400 },
    after: refused(/extra: \[id\]/),
  },
  {
    section: OP1,
    quote: "`operationId`s are unique",
    send: patch("petstore-v1", semantic({ paths: { "/a": { get: { ...op(), operationId: "x" } }, "/b": { post: { ...op(), operationId: "x" } } } })),
    expect: { status: 400 },
    after: refused(/same operation id "x"/),
  },
  {
    section: OP1,
    quote: "component names match `^[a-zA-Z0-9._-]+$`.",
    case: "OpenAPI 3.0 (the 3.1 schema refuses such names itself)",
    send: patch("petstore-v1", semantic({ openapi: "3.0.3", components: { schemas: { "Pet Shop": { type: "object" } } } })),
    expect: { status: 400 },
    after: refused(/identifier "Pet Shop" is not supported/),
  },
  {
    section: OP1,
    quote: "component names match `^[a-zA-Z0-9._-]+$`.",
    case: "dots, dashes and underscores are fine",
    send: patch("petstore-v1", semantic({ components: { schemas: { "Pet.v1_a-b": { type: "object" } } } })),
    expect: { status: 200 },
  },
  {
    section: OP1,
    quote: "Examples are not validated;",
    send: patch(
      "petstore-v1",
      semantic({
        paths: {
          "/p": {
            get: op({ "200": { description: "ok", content: { "application/json": { schema: { type: "integer" }, example: "not a number" } } } } as never),
          },
        },
      }),
    ),
    expect: { status: 200 },
  },
  {
    section: OP1,
    quote: "an OpenAPI document that breaks the OpenAPI schema → 400 with the validator's message",
    send: patch("petstore-v1", { ...oas, servers: "nope" }),
    expect: { status: 400 },
    after: (_w, a) => expect((a.body as { message: string }).message).toMatch(/servers.*must be array/),
  },
  {
    section: OP1,
    quote: "empty apiID: `/gw/apis/oas/` loses its trailing slash and lands on the collection route, which has no PATCH → 405 `Method not supported`",
    send: patch("", oas),
    expect: { status: 405, body: gwError("Method not supported") },
  },
  {
    section: OP1,
    quote: "unknown apiID → **404 `API not found`**",
    send: patch("ghost", oas),
    expect: { status: 404, body: gwError("API not found") },
    after: ({ sb }) => expect(sb.inspect.store.apis.has("ghost")).toBe(false),
  },
  {
    section: OP1,
    quote: "(the interface cannot create APIs: an API must exist before it can be patched",
    send: patch("brand-new", oas, "?listenPath=/new/"),
    expect: { status: 404 },
    after: ({ sb }) => expect(sb.inspect.store.apis.has("brand-new")).toBe(false),
  },
  {
    section: OP1,
    quote: "bad JSON sent to an unknown API still gets 400)",
    send: patch("ghost", "{{{"),
    expect: { status: 400, body: gwError("request malformed") },
  },
  {
    section: OP1,
    quote:
      "if the body carries `x-gw-api-gateway` with `info.id` different from the path's apiID → 400 `Request APIID does not match that in Definition! For Update operations these must match.`",
    send: patch("petstore-v1", { ...oas, "x-gw-api-gateway": complete("other") }),
    expect: { status: 400, body: gwError("Request APIID does not match that in Definition! For Update operations these must match.") },
  },
  {
    section: OP1,
    quote: "An extension **without** `info.id` counts as different (the empty id does not match): 400 as well.",
    send: patch("petstore-v1", { ...oas, "x-gw-api-gateway": complete(undefined) }),
    expect: { status: 400, match: { message: "Request APIID does not match that in Definition! For Update operations these must match." } },
  },
  {
    section: OP1,
    quote: "Either leave the extension out or give it the path's id.",
    case: "the path's id",
    send: patch("petstore-v1", {
      ...oas,
      "x-gw-api-gateway": {
        info: { id: "petstore-v1", name: "Renamed", state: { active: true } },
        server: { listenPath: { value: "/renamed/" } },
        upstream: { url: "http://x" },
      },
    }),
    expect: { status: 200 },
    after: ({ sb }) =>
      expect(sb.inspect.store.apis.get("petstore-v1")!.extension).toMatchObject({ info: { name: "Renamed" }, server: { listenPath: { value: "/renamed/" } } }),
  },
  {
    section: OP1,
    quote: "Query flags: `upstreamURL`, `listenPath`, `customDomain` are trimmed strings",
    send: patch("petstore-v1", oas, "?listenPath=%20/trimmed/%20&upstreamURL=%20http://up.internal%20&customDomain=%20pets.example.com%20"),
    expect: { status: 200 },
    after: ({ sb }) =>
      expect(sb.inspect.store.apis.get("petstore-v1")!.extension).toMatchObject({
        server: { listenPath: { value: "/trimmed/" }, customDomain: { name: "pets.example.com" } },
        upstream: { url: "http://up.internal" },
      }),
  },
  {
    section: OP1,
    quote:
      "`allowList`, `validateRequest`, `mockResponse`, `authentication` are booleans parsed like Go's `strconv.ParseBool` on the trimmed value (`1 t T TRUE true True` and `0 f F FALSE false False`",
    case: "every spelling of true, trimmed",
    send: patch("petstore-v1", oas, "?allowList=t&validateRequest=%20TRUE%20&mockResponse=True"),
    expect: { status: 200 },
    after: ({ sb }) => expect(sb.inspect.store.apis.get("petstore-v1")!.flags).toEqual({ allowList: true, validateRequest: true, mockResponse: true }),
  },
  {
    section: OP1,
    quote: "`0 f F FALSE false False`",
    case: "every spelling of false",
    prepare: [patch("petstore-v1", oas, "?allowList=1&validateRequest=T&mockResponse=true")],
    send: patch("petstore-v1", oas, "?allowList=F&validateRequest=0&mockResponse=False"),
    expect: { status: 200 },
    after: ({ sb }) => expect(sb.inspect.store.apis.get("petstore-v1")!.flags).toEqual({ allowList: false, validateRequest: false, mockResponse: false }),
  },
  {
    section: OP1,
    quote: "any other value is ignored, not an error)",
    prepare: [patch("petstore-v1", oas, "?mockResponse=1")],
    send: patch("petstore-v1", oas, "?mockResponse=yes&allowList=tRuE&validateRequest=2"),
    expect: { status: 200 },
    after: ({ sb }) => expect(sb.inspect.store.apis.get("petstore-v1")!.flags).toEqual({ allowList: false, validateRequest: false, mockResponse: true }),
  },
  {
    section: OP1,
    quote: "A relative `upstreamURL` → 400",
    send: patch("petstore-v1", oas, "?upstreamURL=/relative"),
    expect: { status: 400, match: { status: "error" } },
  },
  {
    section: OP1,
    quote: "`authentication=true` with no `security` in the document → 400.",
    send: patch("petstore-v1", oas, "?authentication=true"),
    expect: { status: 400, match: { status: "error" } },
  },
  {
    section: OP1,
    quote: "`authentication=true`",
    case: "with security it switches authentication on",
    send: patch(
      "petstore-v1",
      { ...oas, security: [{ key: [] }], components: { securitySchemes: { key: { type: "apiKey", in: "header", name: "Authorization" } } } },
      "?authentication=1",
    ),
    expect: { status: 200 },
    after: ({ sb }) => expect(sb.inspect.store.apis.get("petstore-v1")!.extension).toMatchObject({ server: { authentication: { enabled: true } } }),
  },
  {
    section: OP1,
    quote: "`customDomain=x` sets the API's custom domain to x",
    send: patch("petstore-v1", oas, "?customDomain=x.example.com"),
    expect: { status: 200 },
    after: ({ sb }) =>
      expect(sb.inspect.store.apis.get("petstore-v1")!.extension.server).toMatchObject({ customDomain: { name: "x.example.com", enabled: true } }),
  },
  {
    section: OP1,
    quote: "(an existing custom domain that is disabled stays disabled)",
    before: ({ sb }) =>
      void ((sb.inspect.store.apis.get("petstore-v1")!.extension.server as Record<string, unknown>).customDomain = { name: "old.example.com", enabled: false }),
    send: patch("petstore-v1", oas, "?customDomain=new.example.com"),
    expect: { status: 200 },
    after: ({ sb }) =>
      expect(sb.inspect.store.apis.get("petstore-v1")!.extension.server).toMatchObject({ customDomain: { name: "new.example.com", enabled: false } }),
  },
  {
    section: OP1,
    quote:
      "Only when **at least one query flag** is given does the gateway rebuild the extension's defaults from the document: then no `servers` and no upstream → 400",
    send: patch("orders-api", bare, "?mockResponse=true"),
    expect: { status: 400, match: { status: "error" } },
    after: ({ sb }) => expect(sb.inspect.store.apis.get("orders-api")!.flags.mockResponse).toBe(false),
  },
  {
    section: OP1,
    quote: "`listenPath` defaults to `/`",
    case: "an API whose extension has no listen path (a body's extension must have one)",
    before: ({ sb }) => void delete (sb.inspect.store.apis.get("orders-api")!.extension.server as Record<string, unknown>).listenPath,
    send: patch("orders-api", oas, "?allowList=true"),
    expect: { status: 200 },
    after: ({ sb }) => expect(sb.inspect.store.apis.get("orders-api")!.extension.server).toMatchObject({ listenPath: { value: "/" } }),
  },
  {
    section: OP1,
    quote: "the upstream comes from `servers[0].url` with its `{variables}` replaced by their defaults",
    before: ({ sb }) => void delete sb.inspect.store.apis.get("orders-api")!.extension.upstream,
    send: patch(
      "orders-api",
      { ...oas, servers: [{ url: "http://{host}:{port}/v1", variables: { host: { default: "svc.internal" }, port: { default: "9000" } } }] },
      "?allowList=true",
    ),
    expect: { status: 200 },
    after: ({ sb }) => expect(sb.inspect.store.apis.get("orders-api")!.extension.upstream).toEqual({ url: "http://svc.internal:9000/v1" }),
  },
  {
    section: OP1,
    quote: "a relative server URL → 400.",
    send: patch("orders-api", { ...oas, servers: [{ url: "/v1" }] }, "?validateRequest=false"),
    expect: { status: 400 },
  },
  {
    section: OP1,
    quote: "Without any flag none of these checks runs.",
    prepare: [patch("orders-api", bare)],
    send: patch("orders-api", { ...oas, servers: [{ url: "/v1" }] }, "?listenPath=%20%20&mockResponse=maybe"),
    expect: { status: 200 },
  },
  {
    section: OP1,
    quote: "A body without `servers` keeps the API's current servers.",
    prepare: [patch("petstore-v1", { ...oas, servers: [{ url: "http://kept.internal" }] })],
    send: patch("petstore-v1", bare),
    expect: { status: 200 },
    after: ({ sb }) =>
      expect(sb.inspect.store.apis.get("petstore-v1")!.document).toMatchObject({ info: { title: "Bare" }, servers: [{ url: "http://kept.internal" }] }),
  },
  {
    section: OP1,
    quote: "The body may leave out `x-gw-api-gateway`: the API keeps its current extension, and the query flags are applied to it.",
    send: patch("petstore-v1", oas, "?listenPath=/pets2/"),
    expect: { status: 200 },
    after: ({ sb }) =>
      expect(sb.inspect.store.apis.get("petstore-v1")!.extension).toMatchObject({
        info: { id: "petstore-v1", name: "Swagger Petstore" },
        server: { listenPath: { value: "/pets2/" }, batchProcessing: { enabled: true } },
      }),
  },
  {
    section: OP1,
    quote: 'Success → 200 `{"key":"<apiID>","status":"ok","action":"modified"}`.',
    send: patch("petstore-v1", oas),
    expect: { status: 200, body: { key: "petstore-v1", status: "ok", action: "modified" } },
  },

  // operation 2
  {
    section: OP2,
    quote: "Body that is not JSON → 500 `Unmarshalling failed`",
    send: client("petstore-v1", "petstore-mobile-app", "nope"),
    expect: { status: 500, body: gwError("Unmarshalling failed") },
  },
  {
    section: OP2,
    quote: "Body that is not JSON → 500 `Unmarshalling failed`",
    case: "a member of the wrong type does not decode either",
    send: client("petstore-v1", "petstore-mobile-app", { redirect_uri: 5 }),
    expect: { status: 500, body: gwError("Unmarshalling failed") },
  },
  {
    section: OP2,
    quote: "(the JSON `null` is JSON: it is an empty update)",
    send: client("petstore-v1", "petstore-mobile-app", null),
    expect: {
      status: 200,
      body: { client_id: "petstore-mobile-app", redirect_uri: "", secret: "sandbox-only-client-secret", meta_data: null, description: "" },
    },
  },
  {
    section: OP2,
    quote: "Checks in this order: unknown API → 404 `API doesn't exist`",
    case: "before an unknown policy and client",
    send: client("ghost", "ghost", { policy_id: "ghost" }),
    expect: { status: 404, body: gwError("API doesn't exist") },
  },
  {
    section: OP2,
    quote: "`policy_id` naming an unknown policy → 404 `Policy doesn't exist`",
    case: "before an unknown client",
    send: client("petstore-v1", "ghost", { policy_id: "ghost" }),
    expect: { status: 404, body: gwError("Policy doesn't exist") },
  },
  {
    section: OP2,
    quote: "a policy whose access rights do not include the client's API → 400 `Policy access rights doesn't contain API this OAuth client belongs to`",
    case: "before an unknown client",
    prepare: [client("petstore-v1", "petstore-mobile-app", { policy_id: "orders-only" })],
    send: client("petstore-v1", "ghost", { policy_id: "orders-only" }),
    expect: { status: 400, body: gwError("Policy access rights doesn't contain API this OAuth client belongs to") },
    after: ({ sb }) => expect(sb.inspect.store.oauthClients.get(mobile)!.policy_id).toBe("mobile-default"),
  },
  {
    section: OP2,
    quote: "a policy whose access rights do not include the client's API",
    case: "a policy whose rights include it",
    send: client("orders-api", "orders-backoffice", { policy_id: "orders-only" }),
    expect: { status: 200, match: { policy_id: "orders-only" } },
  },
  {
    section: OP2,
    quote: "unknown client → 404 `OAuth Client ID not found`.",
    send: client("petstore-v1", "ghost", {}),
    expect: { status: 404, body: gwError("OAuth Client ID not found") },
  },
  {
    section: OP2,
    quote: "The interface cannot create OAuth clients: they must exist before they are updated.",
    send: client("orders-api", "new-client", { redirect_uri: "https://x" }),
    expect: { status: 404 },
    after: ({ sb }) => expect(sb.inspect.store.oauthClients.has("orders-api\0new-client")).toBe(false),
  },
  {
    section: OP2,
    quote: "`client_id`, `secret` and `api_id` in the body are **ignored**: a client's secret cannot be changed through this operation.",
    send: client("petstore-v1", "petstore-mobile-app", { policy_id: "mobile-default", secret: "changed", client_id: "other", api_id: "other" }),
    expect: { status: 200, match: { client_id: "petstore-mobile-app", secret: "sandbox-only-client-secret" } },
    after: ({ sb }) => expect(sb.inspect.store.oauthClients.get(mobile)).toMatchObject({ apiId: "petstore-v1", secret: "sandbox-only-client-secret" }),
  },
  {
    section: OP2,
    quote: "`redirect_uri`, `policy_id`, `meta_data`, `description` are **replaced wholesale**: a field left out is cleared.",
    prepare: [
      client("petstore-v1", "petstore-mobile-app", { redirect_uri: "https://a/cb", policy_id: "mobile-default", meta_data: { a: 1 }, description: "d" }),
    ],
    send: client("petstore-v1", "petstore-mobile-app", { policy_id: "mobile-default" }),
    expect: {
      status: 200,
      body: {
        client_id: "petstore-mobile-app",
        redirect_uri: "",
        policy_id: "mobile-default",
        secret: "sandbox-only-client-secret",
        meta_data: null,
        description: "",
      },
    },
  },
  {
    section: OP2,
    quote: "When `policy_id` changes from a non-empty value, every token issued to the client is revoked.",
    send: client("petstore-v1", "petstore-mobile-app", { policy_id: "gold-tier" }),
    expect: { status: 200 },
    after: ({ sb }) => expect(sb.inspect.store.oauthClients.get(mobile)).toMatchObject({ tokens: 0, revokedTokens: 12 }),
  },
  {
    section: OP2,
    quote: "When `policy_id` changes from a non-empty value",
    case: "the same policy again revokes nothing",
    send: client("petstore-v1", "petstore-mobile-app", { policy_id: "mobile-default" }),
    expect: { status: 200 },
    after: ({ sb }) => expect(sb.inspect.store.oauthClients.get(mobile)).toMatchObject({ tokens: 12, revokedTokens: 0 }),
  },
  {
    section: OP2,
    quote: "Success → 200 with `client_id, redirect_uri, policy_id, secret, meta_data, description`",
    send: client("petstore-v1", "petstore-mobile-app", {
      redirect_uri: "https://n/cb",
      policy_id: "mobile-default",
      meta_data: { k: "v" },
      description: "app",
    }),
    expect: {
      status: 200,
      body: {
        client_id: "petstore-mobile-app",
        redirect_uri: "https://n/cb",
        policy_id: "mobile-default",
        secret: "sandbox-only-client-secret",
        meta_data: { k: "v" },
        description: "app",
      },
    },
  },
  {
    section: OP2,
    quote: "(`policy_id` left out of the answer when it is empty)",
    send: client("petstore-v1", "petstore-mobile-app", { policy_id: "", redirect_uri: "https://n/cb" }),
    expect: { status: 200 },
    after: (_w, a) => expect(Object.keys(a.body as object).sort()).toEqual(["client_id", "description", "meta_data", "redirect_uri", "secret"]),
  },

  // operation 7
  {
    section: OP7,
    quote: "Upsert: creates the organisation's session or overwrites it.",
    prepare: [orgKey("org-1", { rate: 10, quota_max: 100 })],
    send: orgKey("org-1", { rate: 20 }),
    expect: { status: 200 },
    after: ({ sb }) => expect(sb.inspect.store.orgKeys.get("org-1")!.session).toEqual({ rate: 20, last_updated: anyString }),
  },
  {
    section: OP7,
    quote: "Body that is not JSON → 400 `Request malformed`",
    send: orgKey("org-1", "{"),
    expect: { status: 400, body: gwError("Request malformed") },
    after: ({ sb }) => expect(sb.inspect.store.orgKeys.size).toBe(0),
  },
  {
    section: OP7,
    quote: "Body that is not JSON → 400 `Request malformed`",
    case: "a member of the wrong type does not decode either",
    send: orgKey("org-1", { rate: "fast" }),
    expect: { status: 400, body: gwError("Request malformed") },
  },
  {
    section: OP7,
    quote: "(`null` is JSON: an empty session)",
    send: orgKey("org-1", null),
    expect: { status: 200, body: { key: "org-1", status: "ok", action: "added" } },
    after: ({ sb }) => expect(Object.keys(sb.inspect.store.orgKeys.get("org-1")!.session)).toEqual(["last_updated"]),
  },
  {
    section: OP7,
    quote: 'Success → 200 `{"key":"<keyID>","status":"ok","action":"added"}`.',
    send: orgKey("org-2", { rate: 1 }),
    expect: { status: 200, body: { key: "org-2", status: "ok", action: "added" } },
  },
  {
    section: OP7,
    quote: "(The route also takes PUT, answering `action: modified`",
    send: orgKey("org-3", { rate: 1 }, "", "PUT"),
    expect: { status: 200, body: { key: "org-3", status: "ok", action: "modified" } },
    after: ({ sb }) => expect(sb.inspect.store.orgKeys.get("org-3")!.session).toMatchObject({ rate: 1 }),
  },
  { section: OP7, quote: "the contract uses POST.)", case: "other methods are refused", send: orgKey("org-3", {}, "", "PATCH"), expect: { status: 405 } },
  {
    section: OP7,
    quote: "`reset_quota` acts only when it is exactly `1`",
    prepare: [orgKey("q", { quota_max: 5 }, "?reset_quota=2"), orgKey("q", { quota_max: 5 }, "?reset_quota=true")],
    send: orgKey("q", { quota_max: 5 }, "?reset_quota=01"),
    expect: { status: 200 },
    after: ({ sb }) => expect(sb.inspect.store.orgKeys.get("q")!.quotaResets).toBe(0),
  },
  {
    section: OP7,
    quote: "the organisation's used quota is cleared and `quota_renews` becomes now + `quota_renewal_rate`.",
    before: ({ sb }) => void sb.inspect.store.orgKeys.set("q", { keyId: "q", session: {}, usedQuota: 40, quotaResets: 0, writes: 1 }),
    send: orgKey("q", { quota_max: 100, quota_renewal_rate: 3600 }, "?reset_quota=1"),
    expect: { status: 200 },
    after: ({ sb }) => {
      const stored = sb.inspect.store.orgKeys.get("q")!;
      expect(stored.usedQuota).toBe(0);
      expect(Number(stored.session.quota_renews)).toBeGreaterThanOrEqual(Math.floor(Date.now() / 1000) + 3598);
    },
  },
  {
    section: OP7,
    quote: "It is an action, not state: sending it again resets the quota again.",
    prepare: [orgKey("q", { quota_max: 5 }, "?reset_quota=1")],
    send: orgKey("q", { quota_max: 5 }, "?reset_quota=1"),
    expect: { status: 200 },
    after: ({ sb }) => expect(sb.inspect.store.orgKeys.get("q")!.quotaResets).toBe(2),
  },
  {
    section: OP7,
    quote: "The session is stored under the path's `{keyID}`",
    send: orgKey("acme", { org_id: "acme", rate: 3 }),
    expect: { status: 200 },
    after: ({ sb }) => expect(sb.inspect.store.orgKeys.get("acme")!.session).toMatchObject({ org_id: "acme", rate: 3 }),
  },
  {
    section: OP7,
    quote: "Write `/gw/org/keys/acme` for organisation `acme`.",
    case: "a key under another id is stored apart (the sandbox does not model organisation limits on traffic)",
    send: orgKey("org-acme", { org_id: "acme" }),
    expect: { status: 200 },
    after: ({ sb }) => expect([...sb.inspect.store.orgKeys.keys()]).toEqual(["org-acme"]),
  },
  {
    section: OP7,
    quote: "lists them all: `post_expiry_action`, `post_expiry_grace_period`",
    send: orgKey("acme", { post_expiry_action: "retain", post_expiry_grace_period: -1 }),
    expect: { status: 200 },
    after: ({ sb }) => expect(sb.inspect.store.orgKeys.get("acme")!.session).toMatchObject({ post_expiry_action: "retain", post_expiry_grace_period: -1 }),
  },
  {
    section: OP7,
    quote: "lists them all: `post_expiry_action`, `post_expiry_grace_period`",
    case: "of the right types",
    send: orgKey("acme", { post_expiry_grace_period: "1d" }),
    expect: { status: 400, body: gwError("Request malformed") },
  },
  {
    section: OP7,
    quote:
      "in an access-rights entry `allowance_scope`, `allowed_types`, `restricted_types`, `field_access_rights`, `disable_introspection`, `endpoints`, `json_rpc_methods`, `json_rpc_methods_access_rights`, `mcp_primitives`, `mcp_access_rights`, and in its `limit` `max_query_depth`, `quota_renews`, `smoothing`).",
    send: orgKey("acme", {
      access_rights: {
        a: {
          api_id: "petstore-v1",
          allowance_scope: "s",
          allowed_types: [{ name: "Query", fields: ["a"] }],
          restricted_types: null,
          field_access_rights: [{ type_name: "Query", field_name: "a", limits: { max_query_depth: 2 } }],
          disable_introspection: true,
          endpoints: [{ path: "/p", methods: [{ name: "GET", limit: { rate: 1, per: 1 } }] }],
          json_rpc_methods: [{ name: "tools/call" }],
          json_rpc_methods_access_rights: { allowed: ["tools/call"] },
          mcp_primitives: [{ type: "tool", name: "t" }],
          mcp_access_rights: { tools: { allowed: ["t"] } },
          limit: { max_query_depth: 3, quota_renews: 0, smoothing: { enabled: true } },
        },
      },
    }),
    expect: { status: 200 },
    after: ({ sb }) =>
      expect(sb.inspect.store.orgKeys.get("acme")!.session).toMatchObject({
        access_rights: { a: { disable_introspection: true, limit: { max_query_depth: 3 } } },
      }),
  },
  {
    section: OP7,
    quote: "in an access-rights entry `allowance_scope`",
    case: "of the right types",
    send: orgKey("acme", { access_rights: { a: { disable_introspection: "yes" } } }),
    expect: { status: 400, body: gwError("Request malformed") },
  },
  {
    section: OP7,
    quote: "The body is the whole session: members the contract lists plus those it does not",
    send: orgKey("acme", { rate: 1, is_inactive: false, quota_max: 10 }),
    expect: { status: 200 },
  },
  {
    section: OP7,
    quote: "The upsert overwrites the whole session: a member left out is gone.",
    prepare: [orgKey("acme", { rate: 1, tags: ["a"] })],
    send: orgKey("acme", { rate: 2 }),
    expect: { status: 200 },
    after: ({ sb }) => expect(sb.inspect.store.orgKeys.get("acme")!.session).not.toHaveProperty("tags"),
  },
  {
    section: OP7,
    quote: "`null` is accepted for the array members (`allowed_urls`, its `methods`, `versions`, `tags`, `apply_policies`)",
    send: orgKey("acme", {
      tags: null,
      apply_policies: null,
      access_rights: {
        a: { api_id: "x", allowed_urls: [{ url: "/p", methods: null }, { methods: ["GET"] }], versions: null },
        b: { api_id: "y", allowed_urls: null },
      },
    }),
    expect: { status: 200 },
  },
  {
    section: OP7,
    quote: "`oauth_keys` values must be strings (anything else → 400).",
    send: orgKey("acme", { oauth_keys: { a: 1 } }),
    expect: { status: 400, body: gwError("Request malformed") },
    after: ({ sb }) => expect(sb.inspect.store.orgKeys.size).toBe(0),
  },
  {
    section: OP7,
    quote: "`oauth_keys` values must be strings",
    case: "strings pass",
    send: orgKey("acme", { oauth_keys: { a: "b" } }),
    expect: { status: 200 },
  },
  {
    section: OP7,
    quote: "`last_updated` is set by the server to the current Unix time.",
    send: orgKey("org-1", { last_updated: "1" }),
    expect: { status: 200 },
    after: ({ sb }) => expect(Math.abs(Number(sb.inspect.store.orgKeys.get("org-1")!.session.last_updated) - Date.now() / 1000)).toBeLessThan(5),
  },
];
