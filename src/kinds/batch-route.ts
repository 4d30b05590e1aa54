/**
 * The batch route is the operator's: every batched gateway change travels, with the admin key
 * in each sub-request, through the loopback API that `targets.gateway.batch` names, and the
 * gateway forwards it to that API's upstream. A resource that changes that API — by its id, or
 * by a listen path at or beneath the route's (the gateway routes by the longest listen path, so
 * an API beneath it would take the batch calls) — could send the key to any host. Validation
 * refuses such a resource; the apply sends directly whatever it cannot prove leaves the route alone.
 */
import type { PathSegment } from "../text/field-path.js";
import { hasSecretRef } from "../secrets/references.js";
import { documentMember } from "./document-ref.js";
import type { BatchRouteClaim, ReservedBatchRoute, Spec } from "./kind.js";

/**
 * A listen path as the gateway's router matches it: trimmed, percent-escapes decoded, one slash
 * between segments, a leading slash and no trailing one (`""`: the root).
 */
export function routedListenPath(value: string): string {
  let text = value.trim();
  try {
    text = decodeURIComponent(text);
  } catch {
    // a bad escape: matched as written
  }
  return `/${text}`.replace(/\/+/g, "/").replace(/\/+$/, "");
}

/** Is `listenPath` the route's own, or beneath it (so that the gateway's longest match gives it the route's calls)? */
export function withinBatchRoute(listenPath: string, route: ReservedBatchRoute): boolean {
  const lp = routedListenPath(listenPath);
  const reserved = routedListenPath(route.listenPath);
  return lp === reserved || lp.startsWith(`${reserved}/`);
}

const extensionListenPath = ["x-gw-api-gateway", "server", "listenPath", "value"] as const;

/** The listen paths an ApiDefinition's spec gives, each with its field: the query flag, the extension's. */
export function givenListenPaths(spec: Spec): Array<{ readonly path: readonly PathSegment[]; readonly value: string }> {
  const found: Array<{ path: readonly PathSegment[]; value: string }> = [];
  const query = spec.query as Record<string, unknown> | undefined;
  if (typeof query?.listenPath === "string") found.push({ path: ["spec", "query", "listenPath"], value: query.listenPath });
  const server = (documentMember(spec.definition, "x-gw-api-gateway") as Record<string, unknown> | undefined)?.server as Record<string, unknown> | undefined;
  const value = (server?.listenPath as Record<string, unknown> | undefined)?.value;
  if (typeof value === "string") found.push({ path: ["spec", "definition", ...extensionListenPath], value });
  return found;
}

/** The fields of an ApiDefinition's spec that address the batch route's loopback API (none: it leaves the route alone, as far as the spec says). */
export function batchRouteClaims(spec: Spec, route: ReservedBatchRoute): BatchRouteClaim[] {
  const claims: BatchRouteClaim[] = [];
  if (typeof spec.apiId === "string" && hasSecretRef(spec.apiId)) {
    claims.push({
      path: ["spec", "apiId"],
      message: `apiId ${JSON.stringify(spec.apiId)} is a secret reference, which cannot be checked against the batch route's loopback API`,
    });
  } else if (route.apiId !== undefined && spec.apiId === route.apiId) {
    claims.push({ path: ["spec", "apiId"], message: `apiId ${JSON.stringify(route.apiId)} is the batch route's loopback API (${route.setting}.apiId)` });
  }
  for (const given of givenListenPaths(spec)) {
    if (hasSecretRef(given.value)) {
      // resolved only when the apply is prepared, from a variable the commit chose: what it is cannot be checked here
      claims.push({
        path: given.path,
        message: `listen path ${JSON.stringify(given.value)} is a secret reference, which cannot be checked against the batch route's (${route.setting}.listenPath)`,
      });
      continue;
    }
    if (!withinBatchRoute(given.value, route)) continue;
    const where = routedListenPath(given.value) === routedListenPath(route.listenPath) ? "is" : "lies beneath";
    claims.push({
      path: given.path,
      message: `listen path ${JSON.stringify(given.value)} ${where} the batch route's (${route.setting}.listenPath ${JSON.stringify(route.listenPath)})`,
    });
  }
  return claims;
}

/**
 * May applying this spec change the batch route? It claims it, or — the loopback API's id not
 * being known — it gives no listen path, so the API it patches keeps the one it has, which may
 * be the route's.
 */
export function mayChangeBatchRoute(spec: Spec, route: ReservedBatchRoute): boolean {
  return batchRouteClaims(spec, route).length > 0 || (route.apiId === undefined && givenListenPaths(spec).length === 0);
}

/** The hint of a refusal: what the operator and the author can do. */
export function batchRouteHint(route: ReservedBatchRoute): string {
  return `the loopback API that carries batched calls with the gateway's admin key is the operator's (${route.setting} in gatesync.yaml), not the repository's: remove this resource or give it another API and listen path; the operator changes the loopback API by hand`;
}
