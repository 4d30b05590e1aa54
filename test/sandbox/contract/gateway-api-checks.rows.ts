/** Contract rows: operation 1, PATCH an API — its checks, in order (the body, the schema, the document's rules, the API id). */
import { expect } from "vitest";
import type { Row } from "./table.js";
import { complete, gwError, oas, op, OP1, patch, refused, semantic } from "./gateway-requests.js";

export const apiCheckRows: Row[] = [
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
];
