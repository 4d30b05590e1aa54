/**
 * The sandbox: a local implementation of the ten management operations over real HTTP, with
 * fault injection and an inspection interface under /__sandbox/. One port serves every base
 * address: gateway `{base}/gw/`, dashboard `{base}/api/hooks`, portal `{base}/portal/api`,
 * LLM settings `{base}/llm/api`, and API traffic under each API's listen path.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { setTimeout as sleep } from "node:timers/promises";
import { Agent } from "undici";
import type { InterfaceName } from "../kinds/kind.js";
import type { Logger } from "../logger.js";
import { silentLogger } from "../logger.js";
import { OpenApiChecker } from "../validate/openapi.js";
import { SchemaRegistry } from "../validate/schema-registry.js";
import type { HandlerContext, Handled, SandboxCredentials } from "./context.js";
import { handleDashboard } from "./dashboard.js";
import { deliverEvent } from "./events.js";
import type { Delivery } from "./events.js";
import { FaultInjector } from "./faults.js";
import type { FaultSettings } from "./faults.js";
import type { Fixtures } from "./fixtures.js";
import { handleGateway } from "./gateway.js";
import { BodyTooLarge, isObject, listenError, parseJson, readBody, writeReply } from "../http/http-io.js";
import type { Reply } from "../http/http-io.js";
import { handleLlm } from "./llm.js";
import { handlePortal } from "./portal.js";
import { SandboxStore } from "./store.js";
import type { Json } from "./store.js";
import { handleTraffic, isBatchCall, matchApi } from "./traffic.js";
import type { DispatchOutcome, DispatchRequest, TrafficDeps } from "./traffic.js";

export interface SandboxOptions {
  readonly port?: number;
  readonly host?: string;
  readonly fixtures?: Fixtures;
  readonly credentials?: Partial<SandboxCredentials>;
  readonly faults?: Partial<FaultSettings>;
  /** Seed of the fault generator. */
  readonly seed?: number;
  /** Largest request body accepted (413 beyond). */
  readonly maxBodyBytes?: number;
  /** Deepest JSON nesting accepted (413 beyond). */
  readonly maxDepth?: number;
  /** Calls kept in the log. */
  readonly logSize?: number;
  readonly logger?: Logger;
}

export interface CallRecord {
  readonly seq: number;
  /** When the answer went out (or the connection was reset). */
  readonly at: string;
  /** When the request arrived, in ms since the epoch (fractional). */
  readonly startedAt: number;
  readonly interface: InterfaceName | "traffic" | "inspect";
  readonly operation: Handled["operation"];
  readonly method: string;
  readonly path: string;
  /** 0: the connection was reset (no answer). */
  readonly status: number;
  /** A batch sub-request (sent by the sandbox itself). */
  readonly internal: boolean;
  /** The fault injected, if any. */
  readonly fault?: string;
  /** Processed, but the answer was dropped (connection reset after processing). */
  readonly lostResponse?: boolean;
}

export interface CallSummary {
  readonly counts: Record<string, { total: number; byStatus: Record<string, number> }>;
  readonly log: readonly CallRecord[];
}

export interface SandboxInspector {
  objects(): Json;
  calls(): CallSummary;
  resetCalls(): void;
  faults(): FaultSettings & { injected: FaultInjector["injected"] };
  setFaults(change: Partial<FaultSettings> & { seed?: number }): FaultSettings;
  deliverEvent(event: string, message?: Json): Promise<Delivery[]>;
  /** Back to the fixtures, and an empty call log. */
  reset(): void;
  readonly store: SandboxStore;
}

export interface SandboxHandle {
  readonly urls: { readonly base: string; readonly gateway: string; readonly dashboard: string; readonly portal: string; readonly llm: string; readonly inspect: string };
  readonly credentials: SandboxCredentials;
  readonly inspect: SandboxInspector;
  stop(): Promise<void>;
}

const portalPrefix = "/portal/api";
const llmPrefix = "/llm/api";

const routePrefix: Record<InterfaceName | "traffic", string> = { gateway: "/gw", portal: portalPrefix, llm: llmPrefix, dashboard: "/api", traffic: "" };

const handlers: Record<InterfaceName | "traffic", (ctx: HandlerContext, deps: TrafficDeps) => Promise<Handled>> = {
  gateway: handleGateway,
  portal: handlePortal,
  dashboard: handleDashboard,
  llm: handleLlm,
  traffic: handleTraffic,
};

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

export async function startSandbox(options: SandboxOptions = {}): Promise<SandboxHandle> {
  const logger = options.logger ?? silentLogger();
  const credentials: SandboxCredentials = {
    gatewayKey: options.credentials?.gatewayKey ?? `gw-${randomBytes(12).toString("hex")}`,
    portalKey: options.credentials?.portalKey ?? `portal-${randomBytes(12).toString("hex")}`,
    dashboardToken: options.credentials?.dashboardToken ?? `dash-${randomBytes(12).toString("hex")}`,
    llmKey: options.credentials?.llmKey ?? `llm-${randomBytes(12).toString("hex")}`,
  };
  let base = "";
  const store = new SandboxStore(options.fixtures ?? {}, () => base);
  const faults = new FaultInjector(options.faults, options.seed ?? 1);
  const dispatcher = new Agent({ keepAliveTimeout: 10_000, connections: 256 });
  const maxBodyBytes = options.maxBodyBytes ?? 1024 * 1024;
  const deps: TrafficDeps = {
    store,
    credentials,
    schemas: new SchemaRegistry(),
    openapi: new OpenApiChecker(),
    maxDepth: options.maxDepth ?? 64,
    selfUrl: () => base,
    dispatcher,
    maxBodyBytes,
    // set below, once `dispatch` exists
    dispatch: () => Promise.reject(new Error("sandbox not started")),
  };
  const logSize = options.logSize ?? 50_000;
  let log: CallRecord[] = [];
  let counts: CallSummary["counts"] = {};
  let seq = 0;

  const record = (entry: Omit<CallRecord, "seq" | "at">): void => {
    const full: CallRecord = { seq: ++seq, at: new Date().toISOString(), ...entry };
    log.push(full);
    // trimmed in steps, not on every entry: the log stays O(1) per call
    if (log.length >= 2 * logSize) log = log.slice(-logSize);
    const c = (counts[entry.operation] ??= { total: 0, byStatus: {} });
    c.total++;
    c.byStatus[String(entry.status)] = (c.byStatus[String(entry.status)] ?? 0) + 1;
  };

  const inspector: SandboxInspector = {
    store,
    objects: () => store.snapshot(),
    calls: () => structuredClone({ counts, log: log.slice(-logSize) }),
    resetCalls: () => {
      log = [];
      counts = {};
    },
    faults: () => ({ ...faults.current(), injected: { ...faults.injected } }),
    setFaults: (change) => faults.update(change),
    deliverEvent: (event, message = {}) => deliverEvent(store, dispatcher, event, message),
    reset: () => {
      store.reset();
      inspector.resetCalls();
    },
  };

  /**
   * One request, without sockets: routing, faults, handlers. The HTTP server writes what it
   * returns; batch sub-requests and the loopback API's proxy hop call it directly, so they
   * travel the same path without the cost of another connection. `dropped`: the connection
   * was reset (before processing, or after: the answer is lost).
   */
  async function dispatch(r: DispatchRequest): Promise<DispatchOutcome> {
    const startedAt = performance.timeOrigin + performance.now();
    const { method, url, internal } = r;
    const path = url.pathname;
    const route = interfaceOf(path) ?? "traffic";
    // A batch call is API traffic by route, but the gateway's by its faults and limits.
    const match = route === "traffic" ? matchApi(store, path) : undefined;
    const isBatch = match !== undefined && isBatchCall(match.api, match.rest, method);
    const iface: InterfaceName | undefined = route !== "traffic" ? route : isBatch || internal ? "gateway" : undefined;
    // One fault draw per sub-request: on the leg the batch processor sends (traffic); the
    // management call that leg is proxied to has had its chance.
    const faultable = iface !== undefined && !(internal && route !== "traffic");
    const ctx: HandlerContext = { method, url, path: path.slice(routePrefix[route].length), headers: r.headers, body: r.body };
    const entry = { interface: iface ?? ("traffic" as const), method, path: `${path}${url.search}`, internal, startedAt };

    const verdict = faultable ? faults.decide(iface, !internal) : { kind: "pass" as const, lostResponse: false, delayMs: 0 };
    switch (verdict.kind) {
      case "throttled":
        record({ ...entry, operation: "unknown", status: 429, fault: "throttled" });
        return { kind: "reply", reply: { ...errorReply(iface, 429, "rate limit exceeded"), headers: { "retry-after": String(verdict.retryAfterSeconds) } } };
      case "reset":
        record({ ...entry, operation: "unknown", status: 0, fault: "reset" });
        return { kind: "dropped" };
      case "error":
        record({ ...entry, operation: "unknown", status: 500, fault: "error" });
        return { kind: "reply", reply: errorReply(iface, 500, "injected fault") };
      case "unavailable":
        record({ ...entry, operation: "unknown", status: 503, fault: "unavailable" });
        return { kind: "reply", reply: { ...errorReply(iface, 503, "service unavailable"), headers: { "retry-after": String(verdict.retryAfterSeconds) } } };
      case "pass":
        break;
    }

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
    if (verdict.delayMs > 0) await sleep(verdict.delayMs);
    if (verdict.lostResponse) {
      record({ ...entry, operation: handled.operation, status: 0, fault: "lostResponse", lostResponse: true });
      return { kind: "dropped" };
    }
    record({ ...entry, operation: handled.operation, status: handled.reply.status });
    return { kind: "reply", reply: handled.reply };
  }
  deps.dispatch = dispatch;

  async function handle(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const url = new URL(req.url ?? "/", base);
    const method = req.method ?? "GET";
    let bodyPromise: Promise<Buffer> | undefined;
    const body = (): Promise<Buffer> => (bodyPromise ??= readBody(req, maxBodyBytes));
    if (url.pathname.startsWith("/__sandbox/")) {
      const reply = await handleInspect(method, url.pathname.slice("/__sandbox".length), body, inspector, deps.maxDepth).catch((err: unknown) =>
        err instanceof BodyTooLarge ? errorReply(undefined, 413, "request body too large") : errorReply(undefined, 500, "sandbox error"),
      );
      writeReply(res, reply);
      return;
    }
    const outcome = await dispatch({ method, url, headers: req.headers, body, internal: false });
    if (outcome.kind === "dropped") req.socket.destroy();
    else writeReply(res, outcome.reply);
  }

  const server = createServer({ keepAliveTimeout: 10_000 }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.error({ err }, "sandbox request failed");
      if (!res.headersSent) writeReply(res, { status: 500, body: { error: "internal error" } });
      else res.destroy();
    });
  });
  server.on("clientError", (_err, socket) => socket.destroy());
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => reject(listenError(`${options.host ?? "127.0.0.1"}:${options.port ?? 0}`, err, "choose another --port (0 takes any free one) or --host")));
    server.listen(options.port ?? 0, options.host ?? "127.0.0.1", () => resolve());
  });
  const address = server.address() as AddressInfo;
  const host = address.family === "IPv6" ? `[${address.address}]` : address.address;
  base = `http://${host}:${address.port}`;
  store.reset(); // now that `${sandbox}` upstreams can be resolved

  return {
    urls: { base, gateway: base, dashboard: base, portal: `${base}${portalPrefix}`, llm: `${base}${llmPrefix}`, inspect: `${base}/__sandbox` },
    credentials,
    inspect: inspector,
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await dispatcher.close();
    },
  };
}

/** The inspection interface (sandbox only): objects, calls, faults, events, reset. */
async function handleInspect(method: string, path: string, body: () => Promise<Buffer>, inspector: SandboxInspector, maxDepth: number): Promise<Reply> {
  const json = async (): Promise<Json | undefined> => {
    const parsed = parseJson(await body(), maxDepth);
    return parsed.ok && isObject(parsed.value) ? parsed.value : undefined;
  };
  const key = `${method} ${path}`;
  switch (key) {
    case "GET /health":
      return { status: 200, body: { status: "ok" } };
    case "GET /objects":
      return { status: 200, body: inspector.objects() };
    case "GET /calls":
      return { status: 200, body: inspector.calls() };
    case "DELETE /calls":
      inspector.resetCalls();
      return { status: 204 };
    case "GET /faults":
      return { status: 200, body: inspector.faults() };
    case "PUT /faults": {
      const change = await json();
      const problem = change === undefined ? "body must be a JSON object" : faultProblem(change);
      if (problem !== undefined) return { status: 400, body: { error: problem } };
      return { status: 200, body: inspector.setFaults(change as Partial<FaultSettings>) };
    }
    case "POST /events": {
      const event = await json();
      if (event === undefined || typeof event.event !== "string") return { status: 400, body: { error: "give {\"event\": \"<type>\", \"message\": {...}}" } };
      const message = isObject(event.message) ? event.message : {};
      return { status: 200, body: { deliveries: await inspector.deliverEvent(event.event, message) } };
    }
    case "POST /reset":
      inspector.reset();
      return { status: 204 };
    default:
      return { status: 404, body: { error: `no inspection route ${key}` } };
  }
}

const rateFields = ["errorRate", "unavailableRate", "resetRate", "lostResponseRate"];

export function faultProblem(change: Json): string | undefined {
  const known = ["latencyMs", "jitterMs", ...rateFields, "rateLimit", "interfaces", "scope", "seed"];
  for (const [k, v] of Object.entries(change)) {
    if (!known.includes(k)) return `unknown fault setting ${k}; known: ${known.join(", ")}`;
    if (rateFields.includes(k) && (typeof v !== "number" || v < 0 || v > 1)) return `${k} must be a number from 0 to 1`;
    if ((k === "latencyMs" || k === "jitterMs" || k === "seed") && (typeof v !== "number" || v < 0)) return `${k} must be a number, 0 or more`;
    if (k === "rateLimit" && v !== null && v !== undefined && !(isObject(v) && typeof v.requestsPerSecond === "number" && v.requestsPerSecond > 0 && typeof v.burst === "number" && v.burst >= 1)) {
      return "rateLimit must be {requestsPerSecond > 0, burst >= 1} or null";
    }
    if (k === "scope" && !["all", "external", "internal"].includes(v as string)) return "scope must be all, external or internal";
    if (k === "interfaces" && !(Array.isArray(v) && v.every((i) => ["gateway", "portal", "dashboard", "llm"].includes(i as string)))) return "interfaces must list gateway, portal, dashboard or llm";
  }
  if (change.rateLimit === null) change.rateLimit = undefined;
  return undefined;
}
