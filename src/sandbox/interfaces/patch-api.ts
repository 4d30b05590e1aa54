/**
 * Operation 1: PATCH /gw/apis/oas/{apiID}, in the reference's order: body (JSON or YAML), the
 * OpenAPI schema, the API's existence, the extension's id; then the query flags, which rebuild
 * the extension's defaults only when at least one is given.
 */
import { BodyTooLarge, isObject } from "../../http/http-io.js";
import type { Reply } from "../../http/http-io.js";
import { nestingDepth, yaml } from "../../load/yaml-reader.js";
import type { HandlerContext, SandboxDeps } from "../context.js";
import { apiExtension } from "../interface-description.js";
import { errorReply } from "../routes.js";
import type { Json, StoredApi } from "../store.js";
import { listenPathOf } from "./traffic.js";
import { decodeWire } from "../wire.js";

const gatewayError = (status: number, message: string): Reply => errorReply("gateway", status, message);

/** Go's strconv.ParseBool; anything else is undefined (ignored, not an error). */
export function parseGoBool(value: string | null): boolean | undefined {
  if (value === null) return undefined;
  const v = value.trim();
  if (["1", "t", "T", "TRUE", "true", "True"].includes(v)) return true;
  if (["0", "f", "F", "FALSE", "false", "False"].includes(v)) return false;
  return undefined;
}

interface QueryFlags {
  readonly upstreamURL?: string;
  readonly listenPath?: string;
  readonly customDomain?: string;
  readonly allowList?: boolean;
  readonly validateRequest?: boolean;
  readonly mockResponse?: boolean;
  readonly authentication?: boolean;
}

/** The flags given (a trimmed string that is not empty, a boolean that parses); undefined when none is. */
function queryFlags(q: URLSearchParams): QueryFlags | undefined {
  const flags: Record<string, string | boolean> = {};
  for (const name of ["upstreamURL", "listenPath", "customDomain"]) {
    const v = q.get(name)?.trim();
    if (v !== undefined && v !== "") flags[name] = v;
  }
  for (const name of ["allowList", "validateRequest", "mockResponse", "authentication"]) {
    const v = parseGoBool(q.get(name));
    if (v !== undefined) flags[name] = v;
  }
  return Object.keys(flags).length === 0 ? undefined : flags;
}

function obj(parent: Json, key: string): Json {
  const v = parent[key];
  if (isObject(v)) return v;
  const created: Json = {};
  parent[key] = created;
  return created;
}

const absolute = (url: string): boolean => /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/]/.test(url);

/** `servers[0].url` with its `{variables}` replaced by their defaults. */
function serverUrl(server: unknown): string | undefined {
  if (!isObject(server) || typeof server.url !== "string") return undefined;
  const variables = isObject(server.variables) ? server.variables : {};
  return server.url.replace(/\{([^}]+)\}/g, (m, name: string) => {
    const v = variables[name];
    return isObject(v) && typeof v.default === "string" ? v.default : m;
  });
}

/** The extension's defaults, rebuilt from the document and the flags (some flag was given). */
function rebuildDefaults(extension: Json, document: Json, flags: QueryFlags, current: Json | undefined): string | undefined {
  const server = obj(extension, "server");
  const listen = obj(server, "listenPath");
  if (flags.listenPath !== undefined) listen.value = flags.listenPath;
  if (typeof listen.value !== "string" || listen.value === "") listen.value = "/";
  let upstream = flags.upstreamURL;
  if (upstream === undefined) {
    const servers = document.servers;
    if (!Array.isArray(servers) || servers.length === 0) return "servers object is empty in OAS: give servers or the upstreamURL flag";
    upstream = serverUrl(servers[0]);
    if (upstream === undefined || !absolute(upstream)) return "invalid server URL in OAS: it must be absolute";
  } else if (!absolute(upstream)) return "invalid upstreamURL: it must be an absolute URL";
  const up = obj(extension, "upstream");
  if (flags.upstreamURL !== undefined || typeof up.url !== "string" || up.url === "") up.url = upstream;
  if (flags.customDomain !== undefined) {
    const existing = current?.server !== undefined && isObject(current.server) ? current.server.customDomain : undefined;
    server.customDomain = { name: flags.customDomain, enabled: !(isObject(existing) && existing.enabled === false) };
  }
  if (flags.authentication !== undefined) {
    if (flags.authentication && (!Array.isArray(document.security) || document.security.length === 0))
      return "authentication requires a security requirement in the OpenAPI document";
    obj(server, "authentication").enabled = flags.authentication;
  }
  return undefined;
}

function jsonOrUndefined(text: string): unknown {
  if (!/^\s*\{/.test(text)) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}

async function readDocument(ctx: HandlerContext, deps: SandboxDeps): Promise<{ doc: Json } | { reply: Reply }> {
  let doc: unknown;
  // read before parsing: a body over the limit is a 413 (BodyTooLarge), not a malformed one
  const text = (await ctx.body()).toString("utf8");
  try {
    // JSON is YAML: JSON.parse reads the usual body many times faster than the YAML parser
    doc = jsonOrUndefined(text) ?? yaml().parse(text, { maxAliasCount: 100 });
  } catch (e) {
    if (e instanceof RangeError) throw new BodyTooLarge();
    return { reply: gatewayError(400, "request malformed") };
  }
  if (!isObject(doc)) return { reply: gatewayError(400, "request malformed") };
  if (nestingDepth(doc, deps.maxDepth) > deps.maxDepth) throw new BodyTooLarge();
  const problem = await deps.openapi.problem(doc);
  if (problem !== undefined) return { reply: gatewayError(400, problem) };
  if ("x-gw-api-gateway" in doc && !decodeWire(doc["x-gw-api-gateway"], apiExtension).ok) return { reply: gatewayError(400, "request malformed") };
  return { doc };
}

export async function patchApi(ctx: HandlerContext, deps: SandboxDeps, apiId: string): Promise<Reply> {
  const read = await readDocument(ctx, deps);
  if ("reply" in read) return read.reply;
  const api: StoredApi | undefined = deps.store.apis.get(apiId);
  if (api === undefined) return gatewayError(404, "API not found");
  const { ["x-gw-api-gateway"]: given, ...document } = read.doc;
  if (given !== undefined && given !== null) {
    const id = isObject(given) && isObject(given.info) ? given.info.id : undefined;
    if (id !== apiId) return gatewayError(400, "Request APIID does not match that in Definition! For Update operations these must match.");
  }
  const extension: Json = structuredClone(isObject(given) ? given : api.extension);
  const flags = queryFlags(ctx.url.searchParams);
  if (flags !== undefined) {
    const problem = rebuildDefaults(extension, document, flags, api.extension);
    if (problem !== undefined) return gatewayError(400, problem);
  }
  // a body without servers keeps the API's current servers
  if (!Array.isArray(document.servers) && api.document !== undefined && api.document.servers !== undefined) document.servers = api.document.servers;
  api.document = document;
  const listenPath = listenPathOf(api);
  api.extension = extension;
  if (listenPathOf(api) !== listenPath) deps.store.apiRevision++;
  api.flags = {
    allowList: flags?.allowList ?? api.flags.allowList,
    validateRequest: flags?.validateRequest ?? api.flags.validateRequest,
    mockResponse: flags?.mockResponse ?? api.flags.mockResponse,
  };
  return { status: 200, body: { key: apiId, status: "ok", action: "modified" } };
}
