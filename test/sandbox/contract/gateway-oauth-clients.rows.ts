/** Contract rows: operation 2, PUT an OAuth client. */
import { expect } from "vitest";
import type { Row } from "./table.js";
import { client, gwError, mobile, OP2 } from "./gateway-requests.js";

export const oauthClientRows: Row[] = [
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
];
