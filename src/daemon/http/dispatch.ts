/**
 * Finds a request's route in the table (route-table.ts) and answers it: an unknown path 404, a
 * known path asked with another method 405 with `Allow`, a request without the route's own
 * credential its refusal (credentials.ts) — all before the route reads anything.
 */
import type { IncomingMessage } from "node:http";
import type { Reply } from "../../http/http-io.js";
import { credentialRefusal } from "./credentials.js";
import type { Route } from "./route-table.js";
import type { Answer, Served } from "./served.js";

interface Compiled {
  readonly route: Route;
  readonly pattern: RegExp;
  readonly names: readonly string[];
}

/**
 * Each row's path as a pattern: `{name}` one segment. The paths are the route table's constants,
 * compiled once at start (server.ts): no repository or client text becomes a pattern — a request's
 * path is only matched against them.
 */
export function compileRoutes(table: readonly Route[]): readonly Compiled[] {
  return table.map((route) => {
    const names: string[] = [];
    const source = route.path.replace(/[.*+?^$()|[\]\\]/g, "\\$&").replace(/\{(\w+)\}/g, (_all, name: string) => (names.push(name), "([^/]+)"));
    return { route, pattern: new RegExp(`^${source}$`), names };
  });
}

/** What a path resolves to: the rows it matches (one per method), its parameters, the path they matched and the query. */
export interface Resolved {
  readonly rows: readonly Compiled[];
  readonly params: Record<string, string>;
  readonly path: string;
  /** The request's query (`?status=failed`), or "". */
  readonly search: string;
}

function matchAll(routes: readonly Compiled[], path: string): Omit<Resolved, "search"> | undefined {
  // a trailing slash is the page's without one (`/runs/`), unless a row has it (`/environments/NAME/`)
  for (const candidate of path.length > 1 && path.endsWith("/") ? [path, path.replace(/\/+$/, "")] : [path]) {
    const rows = routes.filter((c) => c.pattern.test(candidate));
    if (rows.length === 0) continue;
    const m = rows[0]!.pattern.exec(candidate)!;
    return { rows, params: Object.fromEntries(rows[0]!.names.map((n, i) => [n, m[i + 1]!])), path };
  }
  return undefined;
}

/**
 * The rows the request's path matches: the one place a request's URL is read. A daemon of the
 * implicit environment has no `named` rows, and answers a root path no daemon row matches as
 * `/environments/default` + the path.
 */
export function resolveRoute(routes: readonly Compiled[], requestUrl: string, implicit: string | undefined): Resolved | undefined {
  const { pathname: path, search } = new URL(requestUrl, "http://x");
  const inScope = routes.filter((c) => c.route.scope !== "named" || implicit === undefined);
  const direct = matchAll(inScope, path);
  const matched =
    direct !== undefined || implicit === undefined
      ? direct
      : matchAll(
          inScope.filter((c) => c.route.scope === "environment"),
          `/environments/${encodeURIComponent(implicit)}${path}`,
        );
  return matched === undefined ? undefined : { ...matched, search };
}

const allowed = (route: Route): string[] => (route.method === "GET" ? ["GET", "HEAD"] : [route.method]);

/** The row of the request's method, or the 405 that lists the methods the path takes. */
export function routeOf(resolved: Resolved, method: string): Compiled | Reply {
  const row = resolved.rows.find((c) => allowed(c.route).includes(method));
  if (row !== undefined) return row;
  return { status: 405, body: { error: "method not allowed" }, headers: { allow: resolved.rows.flatMap((c) => allowed(c.route)).join(", ") } };
}

/** Answers a request: its route's, past the route's credential; 404 and 405 without reading anything. */
export async function dispatch(
  resolved: Resolved | undefined,
  req: IncomingMessage,
  res: Parameters<Route["handle"]>[0]["res"],
  served: Served,
): Promise<Answer> {
  if (resolved === undefined) return { status: 404, body: { error: "not found" } };
  const row = routeOf(resolved, req.method ?? "GET");
  if ("status" in row) return row;
  const refused = credentialRefusal(row.route.credential, req, served.credentials, row.route.notServed);
  if (refused !== undefined) return refused;
  return row.route.handle({ req, res, params: resolved.params, path: resolved.path, search: resolved.search, served });
}
