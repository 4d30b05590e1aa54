/**
 * The handlers of each environment's rows (route-table.ts): its pages, `/status` and `/state`,
 * below `/environments/NAME/` — and, for the implicit environment, at the root, whose paths are
 * aliases of `/environments/default/…`.
 */
import type { Reply } from "../../http/http-io.js";
import { handleStateRead } from "./state-endpoint.js";
import { handleOwnershipRead } from "./ownership-endpoint.js";
import type { Answer, RouteRequest, ServedEnvironment } from "./served.js";
import type { PageName } from "../ui/status-page.js";

/** A redirect to a relative location: the pages work behind a reverse proxy's path prefix. */
export function redirect(location: string): Reply {
  return { status: 302, headers: { location, "cache-control": "no-store", "content-length": "0" }, raw: Buffer.alloc(0) };
}

/** The environment the path names, or the 404 that lists them. */
function environmentOf(r: RouteRequest): ServedEnvironment | Reply {
  const list = r.served.environments.list;
  const noSuch: Reply = { status: 404, body: { error: "no such environment", environments: list.map((e) => e.name) } };
  let name: string;
  try {
    name = decodeURIComponent(r.params.env!);
  } catch {
    return noSuch;
  }
  return list.find((e) => e.name === name) ?? noSuch;
}

const isReply = (v: ServedEnvironment | Reply): v is Reply => "status" in v && typeof v.status === "number";

/** `/environments/NAME`: to its overview. */
export function environmentRoot(r: RouteRequest): Reply {
  const env = environmentOf(r);
  return isReply(env) ? env : redirect(`${encodeURIComponent(env.name)}/`);
}

/** One of the environment's pages, given the URL below `/environments/NAME` (its links are relative to it). */
export function environmentPage(page: PageName): (r: RouteRequest) => Answer {
  return (r) => {
    const env = environmentOf(r);
    if (isReply(env)) return env;
    const url = `${r.path.slice(`/environments/${r.params.env!}`.length)}${r.search}`;
    const served = env.page?.serve(r.req, r.res, { page, url, params: r.params }) === true;
    return served ? "answered" : { status: 404, body: { error: "not found" } };
  };
}

export async function environmentStatus(r: RouteRequest): Promise<Reply> {
  const env = environmentOf(r);
  return isReply(env) ? env : { status: 200, body: await env.status() };
}

export async function environmentState(r: RouteRequest): Promise<Reply> {
  const env = environmentOf(r);
  return isReply(env) ? env : handleStateRead(env.state);
}

export async function environmentOwnership(r: RouteRequest): Promise<Reply> {
  const env = environmentOf(r);
  return isReply(env) ? env : handleOwnershipRead(env.ownership);
}

/** `/state` of a daemon of named environments: which environment's? */
export function statePerEnvironment(r: RouteRequest): Reply {
  const names = r.served.environments.list.map((e) => e.name);
  return { status: 404, body: { error: "the state is per environment", paths: names.map((n) => `/environments/${n}/state`) } };
}
