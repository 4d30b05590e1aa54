/**
 * Developer-portal management (operations 3, 5, 8, 9 under {portal_api_url}): credential
 * `Authorization: <key>` (401), errors as {"errors":[...]}, validation failures 422 (400 for
 * client types), unknown ids 404, timestamps `YYYY-MM-DD HH:MM`.
 */
import { portalEventTypes } from "../../contract/operations.js";
import { clientTypeBody, portalWebhookBody, productBody } from "../interface-description.js";
import { decodeWire } from "../wire.js";
import { appTypeDerivation, csvProblem, grantTypeValues, responseTypeValues } from "./client-type-rules.js";
import type { IdpAppType } from "./client-type-rules.js";
import type { HandlerContext, Handled, SandboxDeps } from "../context.js";
import { isObject, parseJson } from "../../http/http-io.js";
import type { Reply } from "../../http/http-io.js";
import type { Json } from "../store.js";

const errors = (status: number, ...messages: string[]): Reply => ({ status, body: { errors: messages } });

export async function handlePortal(ctx: HandlerContext, deps: SandboxDeps): Promise<Handled> {
  if (ctx.headers.authorization !== deps.credentials.portalKey) return { operation: "unknown", reply: errors(401, "Not authorised") };
  const segments = ctx.path.split("/").slice(1);
  if (segments[0] === "oauth-providers" && segments[2] === "client-types" && segments.length === 4) {
    if (ctx.method !== "PUT") return { operation: "updateClientType", reply: errors(405, "Method not allowed") };
    return { operation: "updateClientType", reply: await updateClientType(ctx, deps, segments[1]!, segments[3]!) };
  }
  if (segments[0] === "products" && segments.length === 1) {
    if (ctx.method !== "POST") return { operation: "createProduct", reply: errors(405, "Method not allowed") };
    return { operation: "createProduct", reply: await createProduct(ctx, deps) };
  }
  if (segments[0] === "webhooks" && segments.length === 1) {
    if (ctx.method !== "POST") return { operation: "createPortalWebhook", reply: errors(405, "Method not allowed") };
    return { operation: "createPortalWebhook", reply: await writeWebhook(ctx, deps, undefined) };
  }
  if (segments[0] === "webhooks" && segments.length === 2 && segments[1] !== "") {
    if (ctx.method !== "PUT") return { operation: "updatePortalWebhook", reply: errors(405, "Method not allowed") };
    return { operation: "updatePortalWebhook", reply: await writeWebhook(ctx, deps, decodeURIComponent(segments[1]!)) };
  }
  return { operation: "unknown", reply: errors(404, "Not found") };
}

async function jsonBody(ctx: HandlerContext, deps: SandboxDeps): Promise<{ ok: true; body: Json } | { ok: false; reply: Reply }> {
  const parsed = parseJson(await ctx.body(), deps.maxDepth);
  if (!parsed.ok) return { ok: false, reply: errors(400, "request body is not valid JSON") };
  if (!isObject(parsed.value)) return { ok: false, reply: errors(400, "request body must be a JSON object") };
  return { ok: true, body: parsed.value };
}

/** Operation 3: PUT /oauth-providers/{provider_id}/client-types/{client_type_id}. */
async function updateClientType(ctx: HandlerContext, deps: SandboxDeps, providerText: string, typeText: string): Promise<Reply> {
  if (!/^\d+$/.test(providerText) || !/^\d+$/.test(typeText)) return errors(400, "provider_id and client_type_id must be integers");
  const provider = deps.store.providers.get(Number(providerText));
  if (provider === undefined) return errors(404, "Identity Provider Not found");
  const existing = provider.clientTypes.get(Number(typeText));
  if (existing === undefined) return errors(404, "Client type not found");
  const read = await jsonBody(ctx, deps);
  if (!read.ok) return read.reply;
  const body = read.body;
  const typed = decodeWire(body, clientTypeBody);
  if (!typed.ok) return errors(400, typed.problem);
  for (const field of ["Name", "ResponseTypes", "GrantType"]) {
    if (typeof body[field] !== "string" || body[field] === "") return errors(400, `${field} is required`);
  }
  const rt = csvProblem(body.ResponseTypes as string, responseTypeValues);
  if (rt !== undefined) return errors(400, `ResponseTypes: ${rt}`);
  const gt = csvProblem(body.GrantType as string, grantTypeValues);
  if (gt !== undefined) return errors(400, `GrantType: ${gt}`);
  const updated: Json = {
    ID: existing.ID,
    Name: body.Name,
    Description: typeof body.Description === "string" ? body.Description : "",
    ResponseTypes: body.ResponseTypes,
    GrantType: body.GrantType,
    TokenEndpointAuthMethod: typeof body.TokenEndpointAuthMethod === "string" ? body.TokenEndpointAuthMethod : "",
    IdpAppType: typeof body.IdpAppType === "string" ? body.IdpAppType : "",
    CreatedAt: existing.CreatedAt,
    UpdatedAt: deps.store.timestamp(),
  };
  if (provider.type === "AppType") {
    const appType = body.IdpAppType as IdpAppType | undefined;
    if (appType === undefined || !(appType in appTypeDerivation)) return errors(400, "IdpAppType is required for this provider");
    Object.assign(updated, appTypeDerivation[appType]);
  }
  provider.clientTypes.set(existing.ID as number, updated);
  return { status: 200, body: updated };
}

function slug(name: string): string {
  return name
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-|-$/g, "");
}

/** A product's APIDetails as the portal fills them in from the gateway's APIs. */
function productApiDetails(details: unknown, store: SandboxDeps["store"]): Json[] | Reply {
  const out: Json[] = [];
  for (const d of Array.isArray(details) ? (details as unknown[]) : []) {
    if (!isObject(d) || typeof d.APIID !== "string") return errors(422, "APIDetails items need an APIID string");
    const api = store.apis.get(d.APIID);
    if (api === undefined) return errors(422, `API ${d.APIID} does not exist`);
    const info = api.extension.info as Json;
    const server = api.extension.server as Json;
    out.push({
      APIID: d.APIID,
      APIType: "oas",
      Description: typeof d.Description === "string" ? d.Description : "",
      ListenPath: (server.listenPath as Json).value,
      Name: info.name,
      OASUrl: typeof d.OASUrl === "string" ? d.OASUrl : "",
      Status: (info.state as Json).active !== false,
      TargetURL: (api.extension.upstream as Json | undefined)?.url ?? "",
    });
  }
  return out;
}

/** The names of catalogues, tags or templates given by id; an unknown id is refused. */
function names(ids: unknown, table: Map<number, string>, what: string): string[] | Reply {
  const out: string[] = [];
  for (const id of Array.isArray(ids) ? (ids as number[]) : []) {
    const name = table.get(id);
    if (name === undefined) return errors(422, `${what} ${id} does not exist`);
    out.push(name);
  }
  return out;
}

/** Operation 5: POST /products. */
async function createProduct(ctx: HandlerContext, deps: SandboxDeps): Promise<Reply> {
  const read = await jsonBody(ctx, deps);
  if (!read.ok) return read.reply;
  const body = read.body;
  const store = deps.store;
  if (typeof body.Name !== "string" || body.Name === "") return errors(422, "Name is required");
  if (typeof body.ProviderID !== "number" || !Number.isInteger(body.ProviderID)) return errors(422, "ProviderID is required and must be an integer");
  if (typeof body.IsDocumentationOnly !== "boolean") return errors(422, "IsDocumentationOnly is required and must be a boolean");
  const typed = decodeWire(body, productBody);
  if (!typed.ok) return errors(422, typed.problem);
  if (!store.providers.has(body.ProviderID)) return errors(422, `provider ${body.ProviderID} does not exist`);
  if (body.IsDocumentationOnly && !Array.isArray(body.SpecDetails)) return errors(422, "documentation-only products need SpecDetails");
  const apiDetails = productApiDetails(body.APIDetails, store);
  if (!Array.isArray(apiDetails)) return apiDetails;
  const catalogues = names(body.Catalogues, store.catalogues, "catalogue");
  const tags = names(body.Tags, store.tags, "tag");
  const templates = names(body.Templates, store.templates, "template");
  for (const r of [catalogues, tags, templates]) if (!Array.isArray(r)) return r;
  const id = store.newId();
  const product: Json = {
    ID: id,
    APIDetails: apiDetails,
    AuthType: "multiple",
    Catalogues: catalogues,
    CID: typeof body.CID === "string" ? body.CID : "",
    Content: typeof body.Content === "string" ? body.Content : "",
    DCREnabled: body.DCREnabled === true,
    Description: typeof body.Description === "string" ? body.Description : "",
    DisplayName: typeof body.DisplayName === "string" ? body.DisplayName : body.Name,
    Feature: body.Feature === true,
    IsDocumentationOnly: body.IsDocumentationOnly,
    Logo: "",
    Name: body.Name,
    Path: slug(body.Name),
    ReferenceID: `prod-${id}`,
    Scopes: typeof body.Scopes === "string" ? body.Scopes : "",
    SpecDetails: body.IsDocumentationOnly ? body.SpecDetails : null,
    Tags: tags,
    Templates: templates,
  };
  store.products.set(id, product);
  return { status: 201, body: product };
}

const webhookMethods = ["GET", "POST", "PUT", "PATCH", "DELETE"];

/** Operations 9 (create, id undefined) and 8 (update). */
async function writeWebhook(ctx: HandlerContext, deps: SandboxDeps, id: string | undefined): Promise<Reply> {
  const store = deps.store;
  const existing = id === undefined ? undefined : store.portalWebhooks.get(id);
  if (id !== undefined && existing === undefined) return errors(404, "Webhook not found");
  const read = await jsonBody(ctx, deps);
  if (!read.ok) return read.reply;
  const body = read.body;
  const typed = decodeWire(body, portalWebhookBody);
  if (!typed.ok) return errors(422, typed.problem);
  if (typeof body.Name !== "string" || body.Name === "") return errors(422, "Name is required");
  if (typeof body.URL !== "string" || !/^https?:\/\/[^/]/.test(body.URL)) return errors(422, "URL must be an absolute http(s) URL");
  if (typeof body.Method !== "string" || !webhookMethods.includes(body.Method)) return errors(422, `Method must be one of ${webhookMethods.join(", ")}`);
  if ("Timeout" in body && (typeof body.Timeout !== "number" || !Number.isInteger(body.Timeout) || body.Timeout < 0))
    return errors(422, "Timeout must be a whole number of seconds, 0 or more");
  const events = body.Events ?? [];
  if (!Array.isArray(events) || events.some((e) => typeof e !== "string" || !(portalEventTypes as readonly string[]).includes(e))) {
    return errors(422, `Events must be event types: ${portalEventTypes.join(", ")}`);
  }
  const now = store.timestamp();
  const webhook: Json = {
    ID: id ?? `wh-${store.newId()}`,
    Name: body.Name,
    URL: body.URL,
    Method: body.Method,
    Timeout: typeof body.Timeout === "number" ? body.Timeout : 0,
    Headers: existing?.Headers ?? [],
    Events: events,
    CreatedAt: existing?.CreatedAt ?? now,
    UpdatedAt: now,
  };
  store.portalWebhooks.set(webhook.ID as string, webhook);
  return { status: id === undefined ? 201 : 200, body: webhook };
}
