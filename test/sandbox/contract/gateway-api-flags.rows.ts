/** Contract rows: operation 1, PATCH an API — its query flags, the upstream and listen path they set, and what a body leaves out. */
import { expect } from "vitest";
import type { Row } from "./table.js";
import { bare, oas, OP1, patch } from "./gateway-requests.js";

export const apiFlagRows: Row[] = [
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
];
