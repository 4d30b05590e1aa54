/** Contract rows: operation 7, POST an organisation key. */
import { expect } from "vitest";
import { anyString } from "./table.js";
import type { Row } from "./table.js";
import { gwError, OP7, orgKey } from "./gateway-requests.js";

export const orgKeyRows: Row[] = [
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
