/**
 * The body that switches an API off when its ApiDefinition leaves the repository
 * (`orphans: deactivate`). The gateway checks a PATCH body against the OpenAPI schema merged
 * with its published `x-gw-api-gateway` schema before anything else: an extension in the body
 * must be complete (`info.name`, `info.state.active`, `upstream.url` or `upstream.loadBalancing`,
 * `server.listenPath.value`), and one holding only `{info: {id, state}}` is refused with 400 —
 * the API would stay active. So the extension sent is complete: the document's own, switched
 * off, with what it lacks filled in from the last applied request — the API's name from
 * `info.title`, its upstream from the `upstreamURL` flag or `servers[0]`, its listen path from the
 * `listenPath` flag. When a piece is nowhere to be found, no body is built: the plan refuses,
 * with a hint holding the extension to put back (placeholders where gatesync knows nothing).
 */
import { materialize } from "./document-ref.js";
import type { Spec } from "./kind.js";
import { containsSensitive } from "../secrets/markers.js";

type Json = Record<string, unknown>;

const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);
const filled = (v: unknown): v is string => typeof v === "string" && /\S/.test(v);
const absolute = (url: string): boolean => /^[A-Za-z][A-Za-z0-9+.-]*:\/\/[^/\s]/.test(url);

/** `servers[0].url` with its `{variables}` replaced by their defaults, when that is an absolute URL. */
function firstServer(document: Json): string | undefined {
  const server = Array.isArray(document.servers) ? (document.servers[0] as unknown) : undefined;
  if (!isObject(server) || typeof server.url !== "string") return undefined;
  const variables = isObject(server.variables) ? server.variables : {};
  const url = server.url.replace(/\{([^}]+)\}/g, (m, name: string) => {
    const v = variables[name];
    return isObject(v) && typeof v.default === "string" ? v.default : m;
  });
  return absolute(url) && !/[{}]/.test(url) ? url : undefined;
}

/** The pieces a complete extension needs, from the document's extension, its query flags and the document. */
interface Pieces {
  readonly name: string | undefined;
  readonly upstream: Json | undefined;
  readonly listenPath: Json | undefined;
}

function piecesOf(document: Json, query: Json, ext: Json): Pieces {
  const info = isObject(ext.info) ? ext.info : {};
  const docInfo = isObject(document.info) ? document.info : {};
  const upstream = isObject(ext.upstream) && (filled(ext.upstream.url) || isObject(ext.upstream.loadBalancing)) ? ext.upstream : undefined;
  const flagUpstream = typeof query.upstreamURL === "string" && absolute(query.upstreamURL.trim()) ? query.upstreamURL.trim() : undefined;
  const serverUrl = flagUpstream ?? firstServer(document);
  const server = isObject(ext.server) ? ext.server : {};
  const listen = isObject(server.listenPath) && filled(server.listenPath.value) ? server.listenPath : undefined;
  const flagListen = typeof query.listenPath === "string" && filled(query.listenPath) ? query.listenPath.trim() : undefined;
  return {
    name: filled(info.name) ? info.name : filled(docInfo.title) ? docInfo.title : undefined,
    upstream: upstream ?? (serverUrl === undefined ? undefined : { url: serverUrl }),
    listenPath: listen ?? (flagListen === undefined ? undefined : { value: flagListen, strip: true }),
  };
}

/** The extension switched off, complete; undefined when a piece is missing. */
function switchedOff(ext: Json, pieces: Pieces, apiId: string): Json | undefined {
  if (pieces.name === undefined || pieces.upstream === undefined || pieces.listenPath === undefined) return undefined;
  const info = isObject(ext.info) ? ext.info : {};
  const server = isObject(ext.server) ? ext.server : {};
  return {
    ...ext,
    info: { ...info, id: filled(info.id) ? info.id : apiId, name: pieces.name, state: { ...(isObject(info.state) ? info.state : {}), active: false } },
    upstream: pieces.upstream,
    server: { ...server, listenPath: pieces.listenPath },
  };
}

const parts = (applied: Spec): { document: Json | undefined; query: Json; ext: Json } => {
  const document = materialize<unknown>(applied.definition);
  if (!isObject(document)) return { document: undefined, query: {}, ext: {} };
  return { document, query: isObject(applied.query) ? applied.query : {}, ext: isObject(document["x-gw-api-gateway"]) ? document["x-gw-api-gateway"] : {} };
};

/** The deactivation's body: the last applied document with a complete extension switched off, or undefined. */
export function deactivationBody(applied: Spec, apiId: string): Json | undefined {
  const { document, query, ext } = parts(applied);
  if (document === undefined) return undefined;
  const extension = switchedOff(ext, piecesOf(document, query, ext), apiId);
  return extension === undefined ? undefined : { ...structuredClone(document), "x-gw-api-gateway": extension };
}

/** The plan's note on such a deactivation. */
export function deactivationNote(applied: Spec): string | undefined {
  const { document, ext } = parts(applied);
  if (document === undefined) return undefined;
  const built =
    Object.keys(ext).length === 0
      ? "its document has no x-gw-api-gateway extension: a complete x-gw-api-gateway extension is sent"
      : "its document's x-gw-api-gateway extension is sent as a complete x-gw-api-gateway extension";
  return `${built}, switched off (name from info.title, upstream and listen path from the last applied query flags or servers), which replaces the API's extension on the server: middleware set only there is dropped (give it back in the document to reactivate it)`;
}

/** Why no body could be built, and the extension to put back by hand (JSON, which YAML reads too). */
export function deactivationRefusal(applied: Spec, address: Readonly<Record<string, string>>): { reason: string; hint: string } {
  const apiId = address.apiID ?? "<api id>";
  const { document, query, ext } = parts(applied);
  const pieces = document === undefined ? { name: undefined, upstream: undefined, listenPath: undefined } : piecesOf(document, query, ext);
  const missing = [
    pieces.name === undefined ? "name (info.title)" : undefined,
    pieces.upstream === undefined ? "upstream (upstreamURL or servers)" : undefined,
    pieces.listenPath === undefined ? "listen path (listenPath)" : undefined,
  ].filter((m) => m !== undefined);
  const extension = {
    info: { id: apiId, name: pieces.name ?? "<API name>", state: { active: false } },
    upstream: pieces.upstream ?? { url: "<upstream URL>" },
    server: { listenPath: pieces.listenPath ?? { value: "<listen path>", strip: true } },
  };
  const reason = containsSensitive(applied)
    ? "its last definition holds sensitive values, which the state does not keep"
    : `the gateway refuses an incomplete x-gw-api-gateway extension, and gatesync knows no ${missing.join(", ")} of it`;
  return {
    reason,
    hint: `put it back in the repository with this in its OpenAPI document, the placeholders filled in — x-gw-api-gateway: ${JSON.stringify(extension)} — apply, then remove it`,
  };
}
