/**
 * Contract rows: the gateway's general rules here, and its operations 1, 2 and 7 from a file each
 * (batch calls, operation 4, are batch.rows.ts's), in the reference's order.
 */
import { expect } from "vitest";
import type { Row } from "./table.js";
import { apiCheckRows } from "./gateway-api-checks.rows.js";
import { apiFlagRows } from "./gateway-api-flags.rows.js";
import { client, G, gwError, oas, orgKey, patch } from "./gateway-requests.js";
import { oauthClientRows } from "./gateway-oauth-clients.rows.js";
import { orgKeyRows } from "./gateway-org-keys.rows.js";

const generalRows: Row[] = [
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
];

export const gatewayRows: Row[] = [...generalRows, ...apiCheckRows, ...apiFlagRows, ...oauthClientRows, ...orgKeyRows];
