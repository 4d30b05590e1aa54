/**
 * Where a request goes: the base address of each interface on the sandbox's one port, the
 * error format of each, and the gateway router's path rules (a path that is not clean is
 * redirected; a trailing slash is stripped before the management routes are matched).
 */
import { posix } from "node:path";
import type { InterfaceName } from "../contract/operations.js";
import type { Reply } from "../http/http-io.js";

export const portalPrefix = "/portal/api";
export const llmPrefix = "/llm/api";

export const routePrefix: Record<InterfaceName | "traffic", string> = { gateway: "/gw", portal: portalPrefix, llm: llmPrefix, dashboard: "/api", traffic: "" };

/** The management interface a request path belongs to (undefined: API traffic, batch calls included). */
export function interfaceOf(path: string): InterfaceName | undefined {
  if (path === "/gw" || path.startsWith("/gw/")) return "gateway";
  if (path === portalPrefix || path.startsWith(`${portalPrefix}/`)) return "portal";
  if (path === llmPrefix || path.startsWith(`${llmPrefix}/`)) return "llm";
  if (path === "/api" || path.startsWith("/api/")) return "dashboard";
  return undefined;
}

/** An error answer in the given interface's own format. */
export function errorReply(iface: InterfaceName | undefined, status: number, message: string): Reply {
  switch (iface) {
    case "gateway":
      return { status, body: { status: "error", message } };
    case "portal":
      return { status, body: { errors: [message] } };
    case "dashboard":
      return { status, body: { Status: "Error", Message: message, Meta: null } };
    case "llm":
      return { status, body: { errors: [{ title: status === 429 ? "Too Many Requests" : "Error", detail: message }] } };
    default:
      return { status, body: { error: message } };
  }
}

/**
 * The gateway router's redirect for a path that is not clean (`//`, `.` or `..` segments):
 * 301 to the cleaned path, the trailing slash kept, the query kept. Undefined: the path is clean.
 */
export function cleanPathRedirect(url: URL): Reply | undefined {
  const path = url.pathname;
  const cleaned = posix.normalize(path);
  if (cleaned === path) return undefined;
  return { status: 301, headers: { location: `${cleaned}${url.search}` }, body: undefined };
}

/** `/org/keys/acme/` → `/org/keys/acme`: the gateway strips trailing slashes before routing. */
export function stripTrailingSlashes(path: string): string {
  return path.replace(/\/+$/, "");
}

/** Path segments, each percent-decoded; undefined when an escape is broken. */
export function decodedSegments(path: string): string[] | undefined {
  try {
    return path
      .split("/")
      .slice(1)
      .map((s) => decodeURIComponent(s));
  } catch {
    return undefined;
  }
}
