/** Contract rows: operation 4, the batch route. */
import { expect } from "vitest";
import { testCredentials } from "../../helpers/sandbox.js";
import type { Row, Send } from "./table.js";

const B = "4. POST `{base_url}/{listen_path}/gw/batch`";
const batch = (listenPath: string, body: unknown, headers: Record<string, string> = {}): Send => ({
  method: "POST",
  path: `${listenPath}gw/batch/`,
  auth: "none",
  headers,
  body,
});
const loopback = { authorization: "sandbox-loopback-key", "x-gw-authorization": testCredentials.gatewayKey };
const malformed = { status: "error", message: "Batch request malformed" };
const creationFailed = { status: "error", message: "Batch request creation failed , request structure malformed" };
type Item = { relative_url: string; code: number; headers: Record<string, string[]> | null; body: string };
const items = (body: unknown): Item[] => body as Item[];
const byUrl = (body: unknown): Record<string, number> => Object.fromEntries(items(body).map((i) => [i.relative_url, i.code]));

export const batchRows: Row[] = [
  {
    section: B,
    quote: "Exists only for an API that has batch processing switched on (in the extension: `server.batchProcessing.enabled: true`)",
    send: batch("/echo/", { requests: [{ method: "GET", relative_url: "a" }] }),
    expect: { status: 200 },
    after: (_w, a) => expect(byUrl(a.body)).toEqual({ a: 200 }),
  },
  {
    section: B,
    quote: "otherwise the request is just API traffic.",
    send: batch("/keep/", { requests: [] }),
    expect: { status: 200, match: { method: "POST", url: "/keep/gw/batch/" } },
  },
  {
    section: B,
    quote: "Note the path: listen path, then `gw/batch`.",
    case: "the loopback API's listen path",
    send: batch("/gw-batch/", { requests: [{ method: "POST", relative_url: "org/keys/b1", headers: loopback, body: "{}" }] }),
    expect: { status: 200 },
    after: ({ sb }) => expect(sb.inspect.store.orgKeys.has("b1")).toBe(true),
  },
  {
    section: B,
    quote: "The production gateway registers the route **with a trailing slash** (`{listen_path}/gw/batch/`)",
    send: batch("/echo/", { requests: [] }),
    expect: { status: 200, body: [] },
  },
  {
    section: B,
    quote: "the form without it is plain API traffic there",
    send: { method: "POST", path: "/echo/gw/batch", body: { requests: [] } },
    expect: { status: 200, match: { method: "POST", url: "/gw/batch" } },
    after: ({ upstream }) => expect(upstream.received).toHaveLength(1),
  },
  {
    section: B,
    quote: "(for a loopback API: 401/403 from its authentication, or the upstream's 404)",
    send: { method: "POST", path: "/gw-batch/gw/batch", body: { requests: [] } },
    expect: { status: 401 },
  },
  {
    section: B,
    quote: "(for a loopback API: 401/403 from its authentication, or the upstream's 404)",
    case: "with the loopback key: the gateway's own 404",
    send: { method: "POST", path: "/gw-batch/gw/batch", auth: loopback, body: { requests: [] } },
    expect: { status: 404 },
  },
  {
    section: B,
    quote: "A method other than POST on the batch route → 200 with an empty body.",
    send: { method: "GET", path: "/echo/gw/batch/" },
    expect: { status: 200, text: "" },
    after: ({ upstream }) => expect(upstream.received).toHaveLength(0),
  },
  { section: B, quote: "The batch call itself needs no credential", send: batch("/locked/", { requests: [] }), expect: { status: 200, body: [] } },
  {
    section: B,
    quote: "every sub-request is authorised on its own (its own `authorization` header, lowercase, inside the batch body)",
    send: batch(
      "/locked/",
      {
        requests: [
          { method: "GET", relative_url: "a", headers: { authorization: "locked-key" } },
          { method: "GET", relative_url: "b", headers: { authorization: "wrong" } },
          { method: "GET", relative_url: "c" },
        ],
      },
      { authorization: "locked-key" },
    ),
    expect: { status: 200 },
    after: (_w, a) => expect(byUrl(a.body)).toEqual({ a: 200, b: 403, c: 401 }),
  },
  {
    section: B,
    quote: "Body is decoded with Go's `encoding/json` decoder: a member of the wrong type (`body` not a string",
    send: batch("/echo/", { requests: [{ method: "POST", relative_url: "x", body: { a: 1 } }] }),
    expect: { status: 400, body: malformed },
  },
  {
    section: B,
    quote: "a header value not a string",
    send: batch("/echo/", { requests: [{ method: "GET", relative_url: "x", headers: { n: 1 } }] }),
    expect: { status: 400, body: malformed },
  },
  {
    section: B,
    quote: "`requests` not an array) → 400 `Batch request malformed`",
    send: batch("/echo/", { requests: "nope" }),
    expect: { status: 400, body: malformed },
    after: ({ upstream }) => expect(upstream.received).toHaveLength(0),
  },
  {
    section: B,
    quote: "`requests` not an array) → 400 `Batch request malformed`",
    case: "a body that is not JSON, or not an object",
    prepare: [batch("/echo/", "not json")],
    send: batch("/echo/", "[1]"),
    expect: { status: 400, body: malformed },
  },
  { section: B, quote: "but `null` and missing members are accepted as empty (`{}` → 200 `[]`)", send: batch("/echo/", {}), expect: { status: 200, body: [] } },
  {
    section: B,
    quote: "but `null` and missing members are accepted as empty",
    case: "null everywhere: a null sub-request is a GET of the listen path",
    send: batch("/echo/", { requests: [{ method: null, relative_url: "n", headers: null, body: null }, null], suppress_parallel_execution: null }),
    expect: { status: 200 },
    after: ({ upstream }) => expect(upstream.received.map((r) => `${r.method} ${r.url}`).sort()).toEqual(["GET /", "GET /n"]),
  },
  {
    section: B,
    quote: "but `null` and missing members are accepted as empty",
    case: "a null body",
    send: batch("/echo/", "null"),
    expect: { status: 200, body: [] },
  },
  {
    section: B,
    quote: 'member names match case-insensitively (`"Requests"`)',
    send: batch("/echo/", { Requests: [{ METHOD: "POST", Relative_URL: "ci", Body: "b" }], SUPPRESS_PARALLEL_EXECUTION: true }),
    expect: { status: 200 },
    after: ({ upstream }) => expect(upstream.received.map((r) => [r.method, r.url, r.body])).toEqual([["POST", "/ci", "b"]]),
  },
  {
    section: B,
    quote: "anything after the first JSON value is ignored.",
    send: batch("/echo/", '{"requests":[{"method":"GET","relative_url":"first"}]} {"requests":"x"} trailing'),
    expect: { status: 200 },
    after: (_w, a) => expect(byUrl(a.body)).toEqual({ first: 200 }),
  },
  { section: B, quote: '`{"requests":[]}` → 200 `[]`.', send: batch("/echo/", { requests: [] }), expect: { status: 200, body: [] } },
  {
    section: B,
    quote: "No size limit is enforced.",
    case: "a 1.2 MB batch",
    send: batch("/echo/", { requests: [{ method: "GET", relative_url: "big" }], padding: "x".repeat(1_200_000) }),
    expect: { status: 200 },
    after: (_w, a) => expect(byUrl(a.body)).toEqual({ big: 200 }),
  },
  {
    section: B,
    quote: "A sub-request that cannot even be built (a `method` that is not a valid HTTP token",
    send: batch("/echo/", {
      requests: [
        { method: "GET", relative_url: "fine" },
        { method: "GE T", relative_url: "x" },
      ],
    }),
    expect: { status: 400, body: creationFailed },
    after: ({ upstream }) => expect(upstream.received).toHaveLength(0),
  },
  {
    section: B,
    quote: "a `relative_url` with a bad `%` escape) fails the **whole** batch → 400 `Batch request creation failed , request structure malformed`.",
    send: batch("/gw-batch/", {
      requests: [
        { method: "POST", relative_url: "org/keys/ok", headers: loopback, body: "{}" },
        { method: "GET", relative_url: "bad%zzescape" },
      ],
    }),
    expect: { status: 400, body: creationFailed },
    after: ({ sb }) => expect(sb.inspect.store.orgKeys.size).toBe(0),
  },
  {
    section: B,
    quote: "Each sub-request goes to `{gateway}/{listen_path trimmed of slashes}/{relative_url}` through the gateway itself",
    send: batch("/echo/", { requests: [{ method: "GET", relative_url: "pets/1?x=2" }] }),
    expect: { status: 200 },
    after: ({ upstream }) => expect(upstream.received.map((r) => r.url)).toEqual(["/pets/1?x=2"]),
  },
  {
    section: B,
    quote: "the API's authentication, quotas and middleware apply, and it is proxied to the API's upstream.",
    case: "mock responses (middleware) answer without the upstream",
    send: batch("/mocked/", { requests: [{ method: "GET", relative_url: "orders/7" }] }),
    expect: { status: 200 },
    after: ({ upstream }, a) => {
      expect(items(a.body)[0]).toMatchObject({ code: 200 });
      expect(JSON.parse(items(a.body)[0]!.body)).toEqual({ id: "o-1", total: 3 });
      expect(upstream.received).toHaveLength(0);
    },
  },
  {
    section: B,
    quote: "A leading `/` in `relative_url` yields `//`, which the gateway's router answers with a redirect that turns a POST into a GET",
    send: batch("/echo/", { requests: [{ method: "POST", relative_url: "/lead", body: "lost" }] }),
    expect: { status: 200 },
    after: ({ upstream }, a) => {
      expect(byUrl(a.body)).toEqual({ "/lead": 200 });
      expect(upstream.received.map((r) => [r.method, r.url, r.body])).toEqual([["GET", "/lead", ""]]);
    },
  },
  {
    section: B,
    quote: "which the gateway's router answers with a redirect",
    case: "the router's own answer to a path with `//`",
    send: { method: "POST", path: "/echo//lead?q=1", body: "x" },
    expect: { status: 301, headers: { location: "/echo/lead?q=1" } },
    after: ({ upstream }) => expect(upstream.received).toHaveLength(0),
  },
  {
    section: B,
    quote: "never start a `relative_url` with `/`.",
    case: "a management call through the loopback API is lost that way",
    send: batch("/gw-batch/", { requests: [{ method: "POST", relative_url: "/org/keys/lost", headers: loopback, body: "{}" }] }),
    expect: { status: 200 },
    after: ({ sb }, a) => {
      expect(byUrl(a.body)).toEqual({ "/org/keys/lost": 405 });
      expect(sb.inspect.store.orgKeys.size).toBe(0);
    },
  },
  {
    section: B,
    quote: "Only the sub-request's own headers are sent.",
    send: batch("/echo/", { requests: [{ method: "GET", relative_url: "h", headers: { "x-inner": "in" } }] }, { "x-outer": "out" }),
    expect: { status: 200 },
    after: ({ upstream }) => {
      expect(upstream.received[0]!.headers["x-inner"]).toBe("in");
      expect(upstream.received[0]!.headers["x-outer"]).toBeUndefined();
    },
  },
  {
    section: B,
    quote:
      "By default sub-requests run **in parallel and results come back in completion order, not request order**: match results to requests by `relative_url`.",
    send: batch("/echo/", {
      requests: [
        { method: "GET", relative_url: "slow?delay=300" },
        { method: "GET", relative_url: "fast" },
      ],
    }),
    expect: { status: 200 },
    after: (_w, a) => expect(items(a.body).map((i) => i.relative_url)).toEqual(["fast", "slow?delay=300"]),
  },
  {
    section: B,
    quote: "`suppress_parallel_execution: true` runs them one after another, in array order.",
    send: batch("/echo/", {
      suppress_parallel_execution: true,
      requests: [
        { method: "GET", relative_url: "slow?delay=200" },
        { method: "GET", relative_url: "fast" },
      ],
    }),
    expect: { status: 200 },
    after: ({ upstream }, a) => {
      expect(items(a.body).map((i) => i.relative_url)).toEqual(["slow?delay=200", "fast"]);
      expect(upstream.received.map((r) => r.url)).toEqual(["/slow?delay=200", "/fast"]);
    },
  },
  {
    section: B,
    quote: "A sub-request's HTTP error is reported as its `code`.",
    send: batch("/gw-batch/", {
      requests: [
        {
          method: "PATCH",
          relative_url: "apis/oas/ghost",
          headers: loopback,
          body: JSON.stringify({ openapi: "3.1.0", info: { title: "t", version: "1" }, paths: {} }),
        },
      ],
    }),
    expect: { status: 200 },
    after: (_w, a) => {
      expect(items(a.body)[0]!.code).toBe(404);
      expect(JSON.parse(items(a.body)[0]!.body)).toEqual({ status: "error", message: "API not found" });
    },
  },
  {
    section: B,
    quote:
      'A sub-request that fails below HTTP (connection refused, broken body) yields an empty item: `{"relative_url":"","code":0,"headers":null,"body":""}`: it cannot be told which one failed.',
    before: ({ sb }) => void sb.inspect.setFaults({ resetRate: 1, scope: "internal", interfaces: ["gateway"] }),
    send: batch("/gw-batch/", { requests: ["a", "b"].map((k) => ({ method: "POST", relative_url: `org/keys/${k}`, headers: loopback, body: "{}" })) }),
    expect: {
      status: 200,
      body: [
        { relative_url: "", code: 0, headers: null, body: "" },
        { relative_url: "", code: 0, headers: null, body: "" },
      ],
    },
  },
  {
    section: B,
    quote: 'Result item: `{"relative_url", "code", "headers": {"Name": ["value"]}, "body": "<string>"}`.',
    send: batch("/echo/", { requests: [{ method: "POST", relative_url: "shape", body: "b" }] }),
    expect: { status: 200 },
    after: (_w, a) => {
      const [item] = items(a.body);
      expect(Object.keys(item!).sort()).toEqual(["body", "code", "headers", "relative_url"]);
      expect(item).toMatchObject({ relative_url: "shape", code: 200, headers: { "Content-Type": ["application/json"], "X-Upstream": ["receiver"] } });
      expect(JSON.parse(item!.body)).toMatchObject({ method: "POST", url: "/shape", body: "b" });
    },
  },
  {
    section: B,
    quote: 'A batch of management calls is possible when the gateway has an API whose upstream is the gateway\'s own management interface (a "loopback" API)',
    send: batch("/gw-batch/", {
      requests: [1, 2].map((i) => ({ method: "POST", relative_url: `org/keys/org-${i}?reset_quota=1`, headers: loopback, body: JSON.stringify({ rate: i }) })),
    }),
    expect: { status: 200 },
    after: ({ sb }, a) => {
      expect(byUrl(a.body)).toEqual({ "org/keys/org-1?reset_quota=1": 200, "org/keys/org-2?reset_quota=1": 200 });
      expect(sb.inspect.store.orgKeys.get("org-2")).toMatchObject({ quotaResets: 1, session: { rate: 2 } });
    },
  },
  {
    section: B,
    quote: "its sub-requests then carry `x-gw-authorization` in their headers and `relative_url`s such as `apis/oas/<id>?listenPath=...`.",
    send: batch("/gw-batch/", {
      requests: [
        {
          method: "PATCH",
          relative_url: "apis/oas/petstore-v1?listenPath=/via-batch/",
          headers: loopback,
          body: JSON.stringify({ openapi: "3.1.0", info: { title: "t", version: "1" }, servers: [{ url: "http://pets.internal" }], paths: {} }),
        },
        { method: "POST", relative_url: "org/keys/nokey", headers: { authorization: "sandbox-loopback-key" }, body: "{}" },
      ],
    }),
    expect: { status: 200 },
    after: ({ sb }, a) => {
      expect(byUrl(a.body)).toEqual({ "apis/oas/petstore-v1?listenPath=/via-batch/": 200, "org/keys/nokey": 403 });
      expect(sb.inspect.store.apis.get("petstore-v1")!.extension.server).toMatchObject({ listenPath: { value: "/via-batch/" } });
    },
  },
];
