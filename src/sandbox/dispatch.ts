/**
 * One request, without sockets: routing, faults, handlers, the call log. The HTTP server writes
 * what it returns; batch sub-requests and a loopback API's hop back to the gateway call it
 * directly, so they travel the same path without the cost of another connection.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { InterfaceName } from "../contract/operations.js";
import { BodyTooLarge } from "../http/http-io.js";
import type { Reply } from "../http/http-io.js";
import type { Logger } from "../logger.js";
import type { CallLog, CallRecord } from "./call-log.js";
import type { HandlerContext, Handled } from "./context.js";
import { handleDashboard } from "./interfaces/dashboard.js";
import type { FaultInjector, Verdict } from "./faults.js";
import { handleGateway } from "./interfaces/gateway.js";
import { handleLlm } from "./interfaces/llm.js";
import { handlePortal } from "./interfaces/portal.js";
import { errorReply, interfaceOf, routePrefix } from "./routes.js";
import { handleTraffic, isBatchRoute, matchApi } from "./interfaces/traffic.js";
import type { DispatchOutcome, DispatchRequest, TrafficDeps } from "./in-sandbox-request.js";

type Route = InterfaceName | "traffic";

const handlers: Record<Route, (ctx: HandlerContext, deps: TrafficDeps) => Promise<Handled>> = {
  gateway: handleGateway,
  portal: handlePortal,
  dashboard: handleDashboard,
  llm: handleLlm,
  traffic: handleTraffic,
};

/** The answer of a fault that stops a request before processing, or undefined for a pass. */
function faultReply(verdict: Verdict, iface: InterfaceName | undefined): { reply?: Reply; status: number; fault: string } | undefined {
  switch (verdict.kind) {
    case "throttled":
      return {
        reply: { ...errorReply(iface, 429, "rate limit exceeded"), headers: { "retry-after": String(verdict.retryAfterSeconds) } },
        status: 429,
        fault: "throttled",
      };
    case "reset":
      return { status: 0, fault: "reset" };
    case "error":
      return { reply: errorReply(iface, 500, "injected fault"), status: 500, fault: "error" };
    case "unavailable":
      return {
        reply: { ...errorReply(iface, 503, "service unavailable"), headers: { "retry-after": String(verdict.retryAfterSeconds) } },
        status: 503,
        fault: "unavailable",
      };
    case "pass":
      return undefined;
  }
}

/** The interface whose faults and limits a request meets: a batch call is the gateway's, though routed as API traffic. */
export function faultInterface(deps: TrafficDeps, path: string, internal: boolean): InterfaceName | undefined {
  const route = interfaceOf(path);
  if (route !== undefined) return route;
  const match = matchApi(deps.store, path);
  return (match !== undefined && isBatchRoute(match.api, match.rest)) || internal ? "gateway" : undefined;
}

export function createDispatch(deps: TrafficDeps, faults: FaultInjector, log: CallLog, logger: Logger): (r: DispatchRequest) => Promise<DispatchOutcome> {
  return async (r) => {
    const startedAt = performance.timeOrigin + performance.now();
    const { method, url, internal } = r;
    const path = url.pathname;
    const route: Route = interfaceOf(path) ?? "traffic";
    const iface = faultInterface(deps, path, internal);
    // One fault draw per sub-request: on the leg the batch processor sends (traffic); the
    // management call that leg is proxied to has had its chance.
    const faultable = iface !== undefined && !(internal && route !== "traffic");
    const entry: Omit<CallRecord, "seq" | "at" | "operation" | "status"> = {
      interface: iface ?? "traffic",
      method,
      path: `${path}${url.search}`,
      internal,
      startedAt,
    };

    const verdict = faultable ? faults.decide(iface, !internal) : { kind: "pass" as const, lostResponse: false, delayMs: 0 };
    const stopped = faultReply(verdict, iface);
    if (stopped !== undefined) {
      log.record({ ...entry, operation: "unknown", status: stopped.status, fault: stopped.fault });
      return stopped.reply === undefined ? { kind: "dropped" } : { kind: "reply", reply: stopped.reply };
    }
    const ctx: HandlerContext = { method, url, path: path.slice(routePrefix[route].length), headers: r.headers, body: r.body };
    let handled: Handled;
    try {
      handled = await handlers[route](ctx, deps);
    } catch (err) {
      if (err instanceof BodyTooLarge) {
        handled = { operation: "unknown", reply: { ...errorReply(iface, 413, "request body too large"), headers: { connection: "close" } } };
      } else {
        logger.error({ err, path }, "sandbox handler failed");
        handled = { operation: "unknown", reply: errorReply(iface, 500, "internal error") };
      }
    }
    if (verdict.kind === "pass" && verdict.delayMs > 0) await sleep(verdict.delayMs);
    if (verdict.kind === "pass" && verdict.lostResponse) {
      log.record({ ...entry, operation: handled.operation, status: 0, fault: "lostResponse", lostResponse: true });
      return { kind: "dropped" };
    }
    log.record({ ...entry, operation: handled.operation, status: handled.reply.status });
    return { kind: "reply", reply: handled.reply };
  };
}
