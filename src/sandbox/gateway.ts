/**
 * Gateway management (operations 1, 2, 7 under /gw/), as the reference describes it:
 * credential checked before any routing (403), then 404 for unknown routes, 405 for wrong
 * methods; error body {"status":"error","message":...}.
 */
import { parse as parseYamlText } from "yaml";
import { nestingDepth } from "../load/yaml-reader.js";
import type { HandlerContext, Handled, SandboxDeps } from "./context.js";
import { fieldTypeProblem } from "./context.js";
import { BodyTooLarge, isObject, parseJson } from "../http/http-io.js";
import type { Reply } from "../http/http-io.js";
import type { Json, StoredApi } from "./store.js";
import { oauthKey } from "./store.js";

const err = (status: number, message: string): Reply => ({ status, body: { status: "error", message } });

export async function handleGateway(ctx: HandlerContext, deps: SandboxDeps): Promise<Handled> {
  if (ctx.headers["x-gw-authorization"] !== deps.credentials.gatewayKey) {
    return { operation: "unknown", reply: err(403, "Attempted administrative access with invalid or missing key!") };
  }
  const segments = ctx.path.split("/").slice(1); // path starts with "/"
  const [a, b, c, d, e] = segments;
  if (a === "apis" && b === "oas" && segments.length <= 4) {
    if (ctx.method !== "PATCH") return { operation: "patchApi", reply: err(405, "Method not supported") };
    return { operation: "patchApi", reply: await patchApi(ctx, deps, decodeURIComponent(c ?? "")) };
  }
  if (a === "oauth" && b === "clients" && segments.length === 4 && c !== undefined && d !== undefined) {
    if (ctx.method !== "PUT") return { operation: "updateOAuthClient", reply: err(405, "Method not supported") };
    return { operation: "updateOAuthClient", reply: await updateOAuthClient(ctx, deps, decodeURIComponent(c), decodeURIComponent(d)) };
  }
  if (a === "org" && b === "keys" && segments.length === 3 && c !== undefined && c !== "" && e === undefined) {
    if (ctx.method !== "POST") return { operation: "upsertOrgKey", reply: err(405, "Method not supported") };
    return { operation: "upsertOrgKey", reply: await upsertOrgKey(ctx, deps, decodeURIComponent(c)) };
  }
  return { operation: "unknown", reply: err(404, "Not found") };
}

function boolFlag(value: string | null): boolean | undefined {
  if (value === null) return undefined;
  if (value === "true" || value === "1") return true;
  if (value === "false" || value === "0") return false;
  return undefined; // any other value is ignored
}

function obj(parent: Json, key: string): Json {
  const v = parent[key];
  if (isObject(v)) return v;
  const created: Json = {};
  parent[key] = created;
  return created;
}

/** Operation 1: PATCH /gw/apis/oas/{apiID}. */
async function patchApi(ctx: HandlerContext, deps: SandboxDeps, apiId: string): Promise<Reply> {
  const body = await ctx.body();
  let doc: unknown;
  try {
    doc = parseYamlText(body.toString("utf8"), { maxAliasCount: 100 });
  } catch (e) {
    if (e instanceof RangeError) throw new BodyTooLarge();
    return err(400, "request malformed");
  }
  if (!isObject(doc)) return err(400, "request malformed");
  if (nestingDepth(doc, deps.maxDepth) > deps.maxDepth) throw new BodyTooLarge();
  const check = await deps.openapi.check(doc);
  if (check.errors.length > 0) {
    const first = check.errors[0]!;
    return err(400, `${first.path.length > 0 ? `${first.path.join(".")}: ` : ""}${first.message}`);
  }
  if (apiId === "") return err(400, "Must specify an apiID to patch");
  const api = deps.store.apis.get(apiId);
  if (api === undefined) return err(404, "API not found");
  const bodyExt = doc["x-gw-api-gateway"];
  if (isObject(bodyExt) && isObject(bodyExt.info) && typeof bodyExt.info.id === "string" && bodyExt.info.id !== apiId) {
    return err(400, "Request APIID does not match that in Definition! For Update operations these must match.");
  }
  const { ["x-gw-api-gateway"]: _ext, ...document } = doc;
  const extension: Json = structuredClone(isObject(bodyExt) ? bodyExt : api.extension);
  const info = obj(extension, "info");
  info.id = apiId;
  const server = obj(extension, "server");
  const q = ctx.url.searchParams;
  const upstreamURL = q.get("upstreamURL")?.trim();
  if (upstreamURL !== undefined && upstreamURL !== "") {
    if (!/^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/]/.test(upstreamURL)) return err(400, "upstreamURL must be an absolute URL");
    obj(extension, "upstream").url = upstreamURL;
  }
  const listenPath = q.get("listenPath")?.trim();
  if (listenPath !== undefined && listenPath !== "") obj(server, "listenPath").value = listenPath;
  const listen = obj(server, "listenPath");
  if (typeof listen.value !== "string" || listen.value === "") listen.value = "/";
  const customDomain = q.get("customDomain")?.trim();
  if (customDomain !== undefined && customDomain !== "") server.customDomain = { name: customDomain, enabled: true };
  const authentication = boolFlag(q.get("authentication"));
  if (authentication !== undefined) {
    if (authentication && (!Array.isArray(document.security) || document.security.length === 0)) {
      return err(400, "authentication requires a security requirement in the OpenAPI document");
    }
    obj(server, "authentication").enabled = authentication;
  }
  const servers = document.servers;
  const upstream = extension.upstream;
  if ((!Array.isArray(servers) || servers.length === 0) && !(isObject(upstream) && typeof upstream.url === "string" && upstream.url !== "")) {
    return err(400, "no upstream URL: give servers in the document or the upstreamURL flag");
  }
  if (!(isObject(upstream) && typeof upstream.url === "string") && Array.isArray(servers) && isObject(servers[0]) && typeof servers[0].url === "string") {
    obj(extension, "upstream").url = servers[0].url;
  }
  const flags: StoredApi["flags"] = { ...api.flags };
  for (const name of ["allowList", "validateRequest", "mockResponse"] as const) {
    const v = boolFlag(q.get(name));
    if (v !== undefined) flags[name] = v;
  }
  api.document = document;
  api.extension = extension;
  api.flags = flags;
  return { status: 200, body: { key: apiId, status: "ok", action: "modified" } };
}

const oauthFields = ["description", "meta_data", "policy_id", "redirect_uri", "secret", "client_id", "api_id"];

/** Operation 2: PUT /gw/oauth/clients/{apiID}/{keyName}. */
async function updateOAuthClient(ctx: HandlerContext, deps: SandboxDeps, apiId: string, clientId: string): Promise<Reply> {
  const parsed = parseJson(await ctx.body(), deps.maxDepth);
  if (!parsed.ok || !isObject(parsed.value)) return err(500, "Unmarshalling failed");
  const body = parsed.value;
  const typeProblem = fieldTypeProblem(deps, "oauth-client.schema.json#/properties/spec/properties", body, oauthFields.filter((f) => f !== "client_id" && f !== "api_id"));
  if (typeProblem !== undefined || ("client_id" in body && typeof body.client_id !== "string") || ("api_id" in body && typeof body.api_id !== "string")) {
    return err(500, "Unmarshalling failed");
  }
  if (![...deps.store.apis.keys()].includes(apiId)) return err(404, "API doesn't exist");
  const client = deps.store.oauthClients.get(oauthKey(apiId, clientId));
  if (client === undefined) return err(404, "OAuth Client ID not found");
  const policy = typeof body.policy_id === "string" ? body.policy_id : "";
  if (policy !== "" && !deps.store.policies.has(policy)) return err(404, "Policy doesn't exist");
  // client_id, secret and api_id are ignored; the other four are replaced wholesale.
  if (client.policy_id !== "" && client.policy_id !== policy) {
    client.revokedTokens += client.tokens;
    client.tokens = 0;
  }
  client.policy_id = policy;
  client.redirect_uri = typeof body.redirect_uri === "string" ? body.redirect_uri : "";
  client.description = typeof body.description === "string" ? body.description : "";
  client.meta_data = isObject(body.meta_data) ? body.meta_data : null;
  return {
    status: 200,
    body: { client_id: client.client_id, redirect_uri: client.redirect_uri, policy_id: client.policy_id, secret: client.secret, meta_data: client.meta_data, description: client.description },
  };
}

/** The org-key fields of contract 2.5 (the spec's properties less gatesync's own). */
function orgKeyFieldsOf(deps: SandboxDeps): string[] {
  return Object.keys(deps.schemas.describe("org-key.schema.json#/properties/spec/properties") ?? {}).filter((f) => f !== "keyId" && f !== "quotaResetTrigger");
}

/** Operation 7: POST /gw/org/keys/{keyID}[?reset_quota=1]. */
async function upsertOrgKey(ctx: HandlerContext, deps: SandboxDeps, keyId: string): Promise<Reply> {
  const parsed = parseJson(await ctx.body(), deps.maxDepth);
  if (!parsed.ok || !isObject(parsed.value)) return err(400, "Request malformed");
  const body = parsed.value;
  const orgKeyFields = orgKeyFieldsOf(deps);
  if (fieldTypeProblem(deps, "org-key.schema.json#/properties/spec/properties", body, orgKeyFields) !== undefined) return err(400, "Request malformed");
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
  return { status: 200, body: { key: keyId, status: "ok", action: "added" } };
}
