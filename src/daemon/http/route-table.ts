/**
 * The daemon's one route table: every path it serves, the method, the credential the route takes
 * and its handler (the dispatcher: dispatch.ts). Adding an endpoint is adding a row. Each row's
 * credential is the only one its route accepts (credentials.ts); test/daemon/route-table.e2e.test.ts
 * holds the same list written out by hand, so a row cannot change its credential unnoticed.
 *
 * Rows of `scope: "environment"` are written once, below `/environments/{env}/`; a daemon of the
 * implicit environment (a config without `environments:`) answers its root paths as aliases of
 * `/environments/default/…` (`/` is `/environments/default/`, `/state` its state), while the
 * rows of `scope: "named"` are the root paths of a daemon of named environments.
 */
import type { Reply } from "../../http/http-io.js";
import { handleConfigRead } from "./config-endpoint.js";
import { handlePromote } from "./promote-endpoint.js";
import { handleFreeze } from "./freeze-endpoint.js";
import { handleEnvironmentSync, handleSync, handleWebhook } from "./triggers.js";
import type { Credential } from "./credentials.js";
import {
  environmentPage,
  environmentRoot,
  environmentOwnership,
  environmentState,
  environmentStatus,
  redirect,
  statePerEnvironment,
} from "./environment-routes.js";
import { health, metrics, ready } from "./probes.js";
import type { Answer, RouteRequest } from "./served.js";
import type { PageName } from "../ui/status-page.js";

export interface Route {
  /** GET routes answer HEAD too. */
  readonly method: "GET" | "POST";
  /** The path, `{name}` a segment of it (handed to the handler as sent, percent-encoded). */
  readonly path: string;
  readonly credential: Credential;
  /** `daemon`: every daemon; `named`: a daemon of named environments; `environment`: each environment's. */
  readonly scope: "daemon" | "named" | "environment";
  readonly handle: (r: RouteRequest) => Promise<Answer> | Answer;
  /** A stream (server-sent events): no deadline on its answer. */
  readonly stream?: true;
  /** What a route of the state token serves, in its 404 while the daemon has none. */
  readonly notServed?: string;
}

/** A row of the environment's pages' token: one of its pages (ui/status-page.ts), or `handle`. */
const page = (path: string, name: PageName | Pick<Route, "handle">, extra: Partial<Route> = {}): Route => ({
  method: "GET",
  path: `/environments/{env}${path}`,
  credential: "pages",
  scope: "environment",
  handle: typeof name === "string" ? environmentPage(name) : name.handle,
  ...extra,
});

const notFound: Reply = { status: 404, body: { error: "not found" } };

export const routeTable: readonly Route[] = [
  // probes and metrics: open (a kubelet, Prometheus)
  { method: "GET", path: "/healthz", credential: "none", scope: "daemon", handle: health },
  { method: "GET", path: "/readyz", credential: "none", scope: "daemon", handle: ready },
  { method: "GET", path: "/metrics", credential: "none", scope: "daemon", handle: metrics },
  // the triggers, each its own secret
  { method: "POST", path: "/hooks/git", credential: "webhook", scope: "daemon", handle: (r) => handleWebhook(r.req, r.served.triggers, r.served.slots) },
  { method: "POST", path: "/sync", credential: "sync", scope: "daemon", handle: (r) => handleSync(r.req, r.served.triggers) },
  // what a merge-request plan reads, with the state token
  {
    method: "GET",
    path: "/config",
    credential: "state",
    scope: "daemon",
    notServed: "the operator's settings are not served",
    handle: (r) => (r.served.opts.operatorConfig === undefined ? notFound : handleConfigRead(r.served.opts.operatorConfig(), r.served.opts.holdOf)),
  },
  // the root of a daemon of named environments
  { method: "GET", path: "/", credential: "pages", scope: "named", handle: (r) => redirect(`environments/${encodeURIComponent(firstName(r))}/`) },
  { method: "GET", path: "/environments", credential: "pages", scope: "named", handle: (r) => redirect(`environments/${encodeURIComponent(firstName(r))}/`) },
  { method: "GET", path: "/environments/", credential: "pages", scope: "named", handle: (r) => redirect(encodeURIComponent(firstName(r)) + "/") },
  {
    method: "GET",
    path: "/status",
    credential: "pages",
    scope: "named",
    handle: async (r) => ({ status: 200, body: await r.served.environments.statusOfAll() }),
  },
  { method: "GET", path: "/state", credential: "state", scope: "named", handle: statePerEnvironment },
  // each environment's: its pages, status and state, its sync and its promotion
  { method: "GET", path: "/environments/{env}", credential: "pages", scope: "environment", handle: environmentRoot },
  page("/", "overview"),
  page("/resources", "resources"),
  page("/resources/{kind}/{name}", "resource"),
  page("/runs", "runs"),
  page("/plan", "plan"),
  page("/ui/events", "events", { stream: true }),
  page("/ui/app.js", "app.js"),
  page("/ui/app.css", "app.css"),
  page("/metrics", { handle: () => redirect("../../metrics") }),
  page("/status", { handle: environmentStatus }),
  { method: "GET", path: "/environments/{env}/state", credential: "state", scope: "environment", handle: environmentState },
  { method: "GET", path: "/environments/{env}/ownership", credential: "state", scope: "environment", handle: environmentOwnership },
  {
    method: "POST",
    path: "/environments/{env}/sync",
    credential: "sync",
    scope: "environment",
    handle: (r) => handleEnvironmentSync(r.params.env!, r.req, r.served.environments.sync, r.served.triggers),
  },
  {
    method: "POST",
    path: "/environments/{env}/promote",
    credential: "promote",
    scope: "environment",
    handle: (r) => handlePromote(r.req, r.params.env!, r.served.environments.promote),
  },
  // the operator's freeze of an environment, with the promotion token
  {
    method: "POST",
    path: "/environments/{env}/freeze",
    credential: "promote",
    scope: "environment",
    handle: (r) => handleFreeze(r.req, r.params.env!, "freeze", r.served.environments.freeze),
  },
  {
    method: "POST",
    path: "/environments/{env}/unfreeze",
    credential: "promote",
    scope: "environment",
    handle: (r) => handleFreeze(r.req, r.params.env!, "unfreeze", r.served.environments.freeze),
  },
];

function firstName(r: RouteRequest): string {
  return r.served.environments.list[0]!.name;
}
