/**
 * API traffic: requests under an API's listen path. Honours the API's active state,
 * authentication (the `authorization` header against fixture keys), mock responses from the
 * OpenAPI document's examples, listen-path stripping, and proxies the rest to the upstream.
 * Operation 4, the batch route `{listen_path}/gw/batch/` of an API with batch processing on,
 * is handed to batch.ts.
 */
import { request } from "undici";
import { isObject } from "../../http/http-io.js";
import { handleBatch } from "./batch.js";
import type { HandlerContext, Handled } from "../context.js";
import { bounded, replyBytes } from "../in-sandbox-request.js";
import type { TrafficDeps } from "../in-sandbox-request.js";
import { cleanPathRedirect } from "../routes.js";
import type { Reply } from "../../http/http-io.js";
import type { Json, SandboxStore, StoredApi } from "../store.js";

const trafficError = (status: number, error: string): Reply => ({ status, body: { error } });

/** The API's listen path as traffic routing matches it: with its leading slash, without a trailing one ("" at the root). */
export function listenPathOf(api: StoredApi): string {
  const value = ((api.extension.server as Json | undefined)?.listenPath as Json | undefined)?.value;
  const lp = typeof value === "string" && value !== "" ? value : "/";
  const withSlash = lp.startsWith("/") ? lp : `/${lp}`;
  return withSlash.length > 1 ? withSlash.replace(/\/+$/, "") : "";
}

/** The APIs by listen path (the first in the store's order where two share one), as of one revision of the store's APIs. */
interface ListenPaths {
  readonly apis: ReadonlyMap<string, StoredApi>;
  readonly revision: number;
  readonly byPath: ReadonlyMap<string, StoredApi>;
}

const listenPathIndex = new WeakMap<SandboxStore, ListenPaths>();

/** Built again only when the APIs changed (a reset, a patch): a request then costs the depth of its path, not the number of APIs. */
function apisByListenPath(store: SandboxStore): ReadonlyMap<string, StoredApi> {
  const known = listenPathIndex.get(store);
  if (known?.apis === store.apis && known.revision === store.apiRevision) return known.byPath;
  const byPath = new Map<string, StoredApi>();
  for (const api of store.apis.values()) {
    const lp = listenPathOf(api);
    if (!byPath.has(lp)) byPath.set(lp, api);
  }
  listenPathIndex.set(store, { apis: store.apis, revision: store.apiRevision, byPath });
  return byPath;
}

/** The API whose listen path holds `path` (the longest one), with the rest of the path. */
export function matchApi(store: SandboxStore, path: string): { api: StoredApi; listenPath: string; rest: string } | undefined {
  const byPath = apisByListenPath(store);
  // the path itself, then each prefix that ends before a `/`, longest first; an API at the root last
  for (let end = path.length; end > 0; end = path.lastIndexOf("/", end - 1)) {
    const listenPath = path.slice(0, end);
    const api = byPath.get(listenPath);
    if (api !== undefined) return { api, listenPath, rest: path.slice(end) };
  }
  const root = byPath.get("");
  return root === undefined ? undefined : { api: root, listenPath: "", rest: path };
}

/**
 * Is this the batch route of an API with batch processing on? The gateway registers it with the
 * trailing slash: `{listen_path}/gw/batch` without it is plain API traffic.
 */
export function isBatchRoute(api: StoredApi, rest: string): boolean {
  const batch = ((api.extension.server as Json | undefined)?.batchProcessing as Json | undefined)?.enabled === true;
  return batch && rest === "/gw/batch/";
}

/** Is `path` a batch route? (Its body may be larger than a management call's.) */
export function isBatchPath(store: SandboxStore, path: string): boolean {
  const match = matchApi(store, path);
  return match !== undefined && isBatchRoute(match.api, match.rest);
}

export async function handleTraffic(ctx: HandlerContext, deps: TrafficDeps): Promise<Handled> {
  const redirect = cleanPathRedirect(ctx.url);
  if (redirect !== undefined) return { operation: "traffic", reply: redirect };
  const match = matchApi(deps.store, ctx.url.pathname);
  if (match === undefined) return { operation: "unknown", reply: trafficError(404, "Not Found") };
  const { api, listenPath, rest } = match;
  const info = (api.extension.info ?? {}) as Json;
  if ((info.state as Json | undefined)?.active === false) return { operation: "traffic", reply: trafficError(404, "API is not active") };
  if (isBatchRoute(api, rest))
    return { operation: "batch", reply: ctx.method === "POST" ? await handleBatch(ctx, deps, listenPath) : { status: 200, raw: Buffer.alloc(0) } };
  const auth = ((api.extension.server as Json | undefined)?.authentication as Json | undefined)?.enabled === true;
  if (auth) {
    const key = ctx.headers.authorization;
    if (key === undefined || key === "") return { operation: "traffic", reply: trafficError(401, "Authorization field missing") };
    if (deps.store.keys.get(key)?.has(api.id) !== true) return { operation: "traffic", reply: trafficError(403, "Access to this API has been disallowed") };
  }
  if (api.flags.mockResponse) {
    const mocked = mockReply(api, rest === "" ? "/" : rest, ctx.method);
    if (mocked !== undefined) return { operation: "traffic", reply: mocked };
  }
  return { operation: "traffic", reply: await proxy(ctx, deps, api, rest) };
}

/** The example answer of the matching operation of the OpenAPI document, if it has one. */
export function mockReply(api: StoredApi, path: string, method: string): Reply | undefined {
  const paths = api.document?.paths;
  if (!isObject(paths)) return undefined;
  for (const [template, item] of Object.entries(paths)) {
    const pattern = new RegExp(`^${template.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\\?\{[^}]+\\?\}/g, "[^/]+")}/?$`);
    if (!pattern.test(path) || !isObject(item)) continue;
    const operation = item[method.toLowerCase()];
    if (!isObject(operation) || !isObject(operation.responses)) return undefined;
    const codes = Object.keys(operation.responses).sort();
    const code = codes.find((c) => c.startsWith("2")) ?? codes.find((c) => c === "default") ?? codes[0];
    if (code === undefined) return undefined;
    const response = operation.responses[code];
    const content = isObject(response) && isObject(response.content) ? response.content : {};
    const media = (content["application/json"] ?? Object.values(content)[0]) as Json | undefined;
    let example: unknown = media?.example;
    if (example === undefined && isObject(media?.examples)) {
      const first = Object.values(media.examples)[0];
      example = isObject(first) ? first.value : undefined;
    }
    if (example === undefined && isObject(media?.schema)) example = media.schema.example;
    const status = /^\d{3}$/.test(code) ? Number(code) : 200;
    return example === undefined ? { status, body: {} } : { status, body: example };
  }
  return undefined;
}

const hopByHop = new Set(["connection", "keep-alive", "transfer-encoding", "upgrade", "host", "content-length", "proxy-connection", "te", "trailer"]);

async function proxy(ctx: HandlerContext, deps: TrafficDeps, api: StoredApi, rest: string): Promise<Reply> {
  const upstream = (api.extension.upstream as Json | undefined)?.url;
  if (typeof upstream !== "string" || upstream === "") return trafficError(502, "API has no upstream");
  const strip = ((api.extension.server as Json | undefined)?.listenPath as Json | undefined)?.strip !== false;
  const suffix = strip ? rest : ctx.url.pathname;
  const target = `${upstream.replace(/\/+$/, "")}${suffix.startsWith("/") || suffix === "" ? suffix : `/${suffix}`}${ctx.url.search}`;
  const headers: Record<string, string> = {};
  for (const [name, value] of Object.entries(ctx.headers)) {
    if (value === undefined || hopByHop.has(name)) continue;
    headers[name] = Array.isArray(value) ? value.join(", ") : value;
  }
  const body = ctx.method === "GET" || ctx.method === "HEAD" ? undefined : await ctx.body();
  if (target.startsWith(`${deps.selfUrl()}/`)) {
    // a loopback API: the hop back into the sandbox travels in-process
    const outcome = await deps.dispatch({
      method: ctx.method,
      url: new URL(target),
      headers,
      body: bounded(body ?? Buffer.alloc(0), deps.maxBodyBytes),
      internal: true,
    });
    if (outcome.kind === "dropped") return trafficError(502, "There was a problem proxying the request");
    const bytes = replyBytes(outcome.reply);
    return { status: outcome.reply.status, headers: bytes.headers, raw: bytes.body };
  }
  try {
    const answer = await request(target, {
      method: ctx.method,
      headers,
      body: body !== undefined && body.length > 0 ? body : null,
      dispatcher: deps.dispatcher,
      headersTimeout: 30_000,
      bodyTimeout: 30_000,
    });
    const raw = Buffer.from(await answer.body.arrayBuffer());
    const outHeaders: Record<string, string> = {};
    for (const [name, value] of Object.entries(answer.headers)) {
      if (value === undefined || hopByHop.has(name)) continue;
      outHeaders[name] = Array.isArray(value) ? value.join(", ") : value;
    }
    return { status: answer.statusCode, headers: outHeaders, raw };
  } catch {
    return trafficError(502, "There was a problem proxying the request");
  }
}
