/**
 * Gateway management (operations 1, 2, 7 under /gw/), as the reference describes it: the
 * credential checked before any routing (403), a path that is not clean redirected, trailing
 * slashes stripped, then 404 for unknown routes and 405 for wrong methods; error body
 * {"status":"error","message":...}.
 */
import { parseJson } from "../../http/http-io.js";
import type { Reply } from "../../http/http-io.js";
import type { HandlerContext, Handled, SandboxDeps } from "../context.js";
import { oauthClientBody, orgKeyBody } from "../interface-description.js";
import { patchApi } from "./patch-api.js";
import { cleanPathRedirect, decodedSegments, errorReply, stripTrailingSlashes } from "../routes.js";
import type { Json } from "../store.js";
import { oauthKey } from "../store.js";
import { decodeWire } from "../wire.js";

const gatewayError = (status: number, message: string): Reply => errorReply("gateway", status, message);

type Route = {
  readonly operation: Handled["operation"];
  readonly methods: readonly string[];
  run?(ctx: HandlerContext, deps: SandboxDeps, method: string): Promise<Reply>;
};

/** The gateway's routes below /gw (after the trailing slash is stripped); undefined: unknown route. */
function route(segments: readonly string[]): Route | undefined {
  const [a, b, c, d] = segments;
  const n = segments.length;
  const filled = segments.every((s) => s !== "");
  if (!filled) return undefined;
  // The collection routes exist (listing, importing), outside the contract: no method of theirs is modelled.
  if ((a === "apis" && b === "oas" && n === 2) || (a === "org" && b === "keys" && n === 2) || (a === "oauth" && b === "clients" && n === 3))
    return { operation: "unknown", methods: [] };
  if (a === "apis" && b === "oas" && n === 3) return { operation: "patchApi", methods: ["PATCH"], run: (ctx, deps) => patchApi(ctx, deps, c!) };
  if (a === "oauth" && b === "clients" && n === 4)
    return { operation: "updateOAuthClient", methods: ["PUT"], run: (ctx, deps) => updateOAuthClient(ctx, deps, c!, d!) };
  if (a === "org" && b === "keys" && n === 3)
    return {
      operation: "upsertOrgKey",
      methods: ["POST", "PUT"],
      run: (ctx, deps, method) => upsertOrgKey(ctx, deps, c!, method === "PUT" ? "modified" : "added"),
    };
  return undefined;
}

export async function handleGateway(ctx: HandlerContext, deps: SandboxDeps): Promise<Handled> {
  if (ctx.headers["x-gw-authorization"] !== deps.credentials.gatewayKey) {
    return { operation: "unknown", reply: gatewayError(403, "Attempted administrative access with invalid or missing key!") };
  }
  const redirect = cleanPathRedirect(ctx.url);
  if (redirect !== undefined) return { operation: "unknown", reply: redirect };
  const path = stripTrailingSlashes(ctx.path);
  const segments = path === "" ? [] : decodedSegments(path);
  if (segments === undefined) return { operation: "unknown", reply: gatewayError(400, "malformed path") };
  const found = route(segments);
  if (found === undefined) return { operation: "unknown", reply: gatewayError(404, "Not found") };
  if (found.run === undefined || !found.methods.includes(ctx.method)) return { operation: found.operation, reply: gatewayError(405, "Method not supported") };
  return { operation: found.operation, reply: await found.run(ctx, deps, ctx.method) };
}

/** Operation 2: PUT /gw/oauth/clients/{apiID}/{keyName}. */
async function updateOAuthClient(ctx: HandlerContext, deps: SandboxDeps, apiId: string, clientId: string): Promise<Reply> {
  const parsed = parseJson(await ctx.body(), deps.maxDepth);
  const decoded = parsed.ok ? decodeWire(parsed.value, oauthClientBody) : undefined;
  if (decoded?.ok !== true) return gatewayError(500, "Unmarshalling failed");
  // null is an empty update
  const body = (decoded.value ?? {}) as Json;
  if (!deps.store.apis.has(apiId)) return gatewayError(404, "API doesn't exist");
  const policy = typeof body.policy_id === "string" ? body.policy_id : "";
  if (policy !== "") {
    const rights = deps.store.policies.get(policy);
    if (rights === undefined) return gatewayError(404, "Policy doesn't exist");
    if (rights !== "all" && !rights.has(apiId)) return gatewayError(400, "Policy access rights doesn't contain API this OAuth client belongs to");
  }
  const client = deps.store.oauthClients.get(oauthKey(apiId, clientId));
  if (client === undefined) return gatewayError(404, "OAuth Client ID not found");
  // client_id, secret and api_id are ignored; the other four are replaced wholesale.
  if (client.policy_id !== "" && client.policy_id !== policy) {
    client.revokedTokens += client.tokens;
    client.tokens = 0;
  }
  client.policy_id = policy;
  client.redirect_uri = typeof body.redirect_uri === "string" ? body.redirect_uri : "";
  client.description = typeof body.description === "string" ? body.description : "";
  client.meta_data = body.meta_data !== null && typeof body.meta_data === "object" ? (body.meta_data as Json) : null;
  return {
    status: 200,
    body: {
      client_id: client.client_id,
      redirect_uri: client.redirect_uri,
      ...(client.policy_id === "" ? {} : { policy_id: client.policy_id }),
      secret: client.secret,
      meta_data: client.meta_data,
      description: client.description,
    },
  };
}

/** Operation 7: POST (or PUT) /gw/org/keys/{keyID}[?reset_quota=1]. */
async function upsertOrgKey(ctx: HandlerContext, deps: SandboxDeps, keyId: string, action: "added" | "modified"): Promise<Reply> {
  const parsed = parseJson(await ctx.body(), deps.maxDepth);
  const decoded = parsed.ok ? decodeWire(parsed.value, orgKeyBody) : undefined;
  if (decoded?.ok !== true) return gatewayError(400, "Request malformed");
  // null is an empty session
  const body = (decoded.value ?? {}) as Json;
  const nowSeconds = Math.floor(Date.now() / 1000);
  const session: Json = { ...structuredClone(body), last_updated: String(nowSeconds) };
  let stored = deps.store.orgKeys.get(keyId);
  if (stored === undefined) {
    stored = { keyId, session, usedQuota: 0, quotaResets: 0, writes: 0 };
    deps.store.orgKeys.set(keyId, stored);
  }
  stored.session = session;
  stored.writes++;
  if (ctx.url.searchParams.get("reset_quota") === "1") {
    stored.usedQuota = 0;
    stored.quotaResets++;
    const renewal = typeof session.quota_renewal_rate === "number" ? session.quota_renewal_rate : 0;
    session.quota_renews = nowSeconds + renewal;
    if (typeof session.quota_max === "number") session.quota_remaining = session.quota_max;
  }
  return { status: 200, body: { key: keyId, status: "ok", action } };
}
