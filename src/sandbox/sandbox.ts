/**
 * The sandbox: a local implementation of the ten management operations over real HTTP, with
 * fault injection and an inspection interface under /__sandbox/. One port serves every base
 * address: gateway `{base}/gw/`, dashboard `{base}/api/hooks`, portal `{base}/portal/api`,
 * LLM settings `{base}/llm/api`, and API traffic under each API's listen path.
 */
import { randomBytes } from "node:crypto";
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo, Socket } from "node:net";
import { Agent } from "undici";
import { BodyTooLarge, listenError, readBody, writeReply } from "../http/http-io.js";
import type { Logger } from "../logger.js";
import { silentLogger } from "../logger.js";
import { defaultMaxBodyBytes } from "./body-limit.js";
import { CallLog } from "./call-log.js";
import type { SandboxCredentials } from "./context.js";
import { createDispatch } from "./dispatch.js";
import { FaultInjector } from "./faults.js";
import type { FaultSettings } from "./faults.js";
import type { Fixtures } from "./fixtures.js";
import { createInspector, handleInspect } from "./inspect.js";
import type { SandboxInspector } from "./inspect.js";
import { OpenApiDocumentChecker } from "./interfaces/openapi-check.js";
import { errorReply, llmPrefix, portalPrefix } from "./routes.js";
import { SandboxStore } from "./store.js";
import { Turns } from "./turns.js";
import { isBatchPath } from "./interfaces/traffic.js";
import type { DispatchOutcome, DispatchRequest, TrafficDeps } from "./in-sandbox-request.js";

export type { CallRecord, CallSummary } from "./call-log.js";
export type { SandboxInspector } from "./inspect.js";
export { errorReply, interfaceOf } from "./routes.js";

export interface SandboxOptions {
  readonly port?: number;
  readonly host?: string;
  readonly fixtures?: Fixtures;
  readonly credentials?: Partial<SandboxCredentials>;
  readonly faults?: Partial<FaultSettings>;
  /** Seed of the fault generator. */
  readonly seed?: number;
  /**
   * Largest management (and traffic) request body accepted, 413 beyond. Production sets none,
   * and real OpenAPI documents run to 5–10 MB: the default (64 MiB) admits them, directly and
   * inside a batch; the limit only protects the sandbox's memory.
   */
  readonly maxBodyBytes?: number;
  /**
   * Largest batch body accepted. The production gateway enforces none; the sandbox stops
   * somewhere (default 256 MiB) only to protect its own memory.
   */
  readonly maxBatchBytes?: number;
  /** Deepest JSON nesting accepted (413 beyond). */
  readonly maxDepth?: number;
  /** Calls kept in the log. */
  readonly logSize?: number;
  readonly logger?: Logger;
}

export interface SandboxHandle {
  readonly urls: {
    readonly base: string;
    readonly gateway: string;
    readonly dashboard: string;
    readonly portal: string;
    readonly llm: string;
    readonly inspect: string;
  };
  readonly credentials: SandboxCredentials;
  readonly inspect: SandboxInspector;
  /**
   * Resolves once no request to the interfaces is being handled: a client killed mid-call may
   * leave one that still changes the store (what an operator waits out before looking).
   */
  idle(): Promise<void>;
  stop(): Promise<void>;
}

/**
 * Counts the requests in the sandbox's hands, and wakes who waits for none. A request is in
 * its hands from its first byte, not from when it is dispatched: the bytes of a client killed
 * just after writing them are already in the socket, and the call they make still happens — an
 * operator who looked before it did would see nothing and forget a create that then arrives.
 * A connection holds such bytes while it has read more than it had when its last answer left
 * (`bytesRead`: listening for its data instead would take the socket from the HTTP parser's
 * direct reading, which held answers back under load).
 */
class InFlight {
  private count = 0;
  /** Each open connection, and the bytes it had read when its last answer was sent. */
  private readonly connections = new Map<Socket, number>();
  private waiters: Array<() => void> = [];

  async track<T>(work: () => Promise<T>): Promise<T> {
    this.count++;
    try {
      return await work();
    } finally {
      this.count--;
      this.wakeIfIdle();
    }
  }

  watch(socket: Socket): void {
    this.connections.set(socket, 0);
    socket.once("close", () => {
      this.connections.delete(socket);
      this.wakeIfIdle();
    });
  }

  answered(socket: Socket): void {
    if (!this.connections.has(socket)) return;
    this.connections.set(socket, socket.bytesRead);
    this.wakeIfIdle();
  }

  private busy(): boolean {
    if (this.count > 0) return true;
    for (const [socket, answeredAt] of this.connections) if (socket.bytesRead > answeredAt) return true;
    return false;
  }

  private wakeIfIdle(): void {
    if (!this.busy()) for (const wake of this.waiters.splice(0)) wake();
  }

  async idle(): Promise<void> {
    // Two turns of the event loop: bytes already in a socket's buffer are read in a poll phase,
    // and the one of this turn may have run before they arrived.
    for (let turn = 0; turn < 2; turn++) await new Promise<void>((resolve) => setImmediate(resolve));
    if (this.busy()) await new Promise<void>((resolve) => this.waiters.push(resolve));
  }
}

function credentialsOf(given: Partial<SandboxCredentials> | undefined): SandboxCredentials {
  const generated = (prefix: string): string => `${prefix}-${randomBytes(12).toString("hex")}`;
  return {
    gatewayKey: given?.gatewayKey ?? generated("gw"),
    portalKey: given?.portalKey ?? generated("portal"),
    dashboardToken: given?.dashboardToken ?? generated("dash"),
    llmKey: given?.llmKey ?? generated("llm"),
  };
}

async function listen(server: Server, port: number, host: string): Promise<string> {
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => reject(listenError(`${host}:${port}`, err, "choose another --port (0 takes any free one) or --host")));
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
}

interface HandlerParts {
  readonly store: SandboxStore;
  readonly inspector: SandboxInspector;
  readonly dispatch: (r: DispatchRequest) => Promise<DispatchOutcome>;
  readonly base: () => string;
  readonly maxBodyBytes: number;
  readonly maxBatchBytes: number;
  readonly maxDepth: number;
  readonly inFlight: InFlight;
}

/** One HTTP request: the inspection interface, or the dispatcher; a dropped answer resets the connection. */
function requestHandler(p: HandlerParts): (req: IncomingMessage, res: ServerResponse) => Promise<void> {
  return async (req, res) => {
    // its answer settles the request's bytes (see InFlight)
    res.once("finish", () => p.inFlight.answered(req.socket));
    const url = new URL(req.url ?? "/", p.base());
    const method = req.method ?? "GET";
    const limit = isBatchPath(p.store, url.pathname) ? p.maxBatchBytes : p.maxBodyBytes;
    let bodyPromise: Promise<Buffer> | undefined;
    const body = (): Promise<Buffer> => (bodyPromise ??= readBody(req, limit));
    if (url.pathname.startsWith("/__sandbox/")) {
      const reply = await handleInspect(method, url.pathname.slice("/__sandbox".length), body, p.inspector, p.maxDepth).catch((err: unknown) =>
        err instanceof BodyTooLarge ? errorReply(undefined, 413, "request body too large") : errorReply(undefined, 500, "sandbox error"),
      );
      writeReply(res, reply);
      return;
    }
    const outcome = await p.inFlight.track(() => p.dispatch({ method, url, headers: req.headers, body, internal: false }));
    if (outcome.kind === "dropped") req.socket.destroy();
    else writeReply(res, outcome.reply);
  };
}

export { defaultMaxBodyBytes } from "./body-limit.js";

export async function startSandbox(options: SandboxOptions = {}): Promise<SandboxHandle> {
  const logger = options.logger ?? silentLogger();
  const credentials = credentialsOf(options.credentials);
  let base = "";
  const store = new SandboxStore(options.fixtures ?? {}, () => base);
  const faults = new FaultInjector(options.faults, options.seed ?? 1);
  const dispatcher = new Agent({ keepAliveTimeout: 10_000, connections: 256 });
  const maxBodyBytes = options.maxBodyBytes ?? defaultMaxBodyBytes;
  const maxBatchBytes = options.maxBatchBytes ?? 256 * 1024 * 1024;
  const log = new CallLog(options.logSize ?? 50_000);
  const deps: TrafficDeps = {
    store,
    credentials,
    openapi: new OpenApiDocumentChecker(),
    maxDepth: options.maxDepth ?? 64,
    selfUrl: () => base,
    dispatcher,
    maxBodyBytes,
    turns: new Turns(),
    // set below, once it exists: sub-requests and loopback hops go through it
    dispatch: () => Promise.reject(new Error("sandbox not started")),
  };
  const dispatch: (r: DispatchRequest) => Promise<DispatchOutcome> = createDispatch(deps, faults, log, logger);
  deps.dispatch = dispatch;
  const inspector = createInspector(store, log, faults, dispatcher);

  const inFlight = new InFlight();
  const handle = requestHandler({ store, inspector, dispatch, base: () => base, maxBodyBytes, maxBatchBytes, maxDepth: deps.maxDepth, inFlight });
  const server = createServer({ keepAliveTimeout: 10_000 }, (req, res) => {
    handle(req, res).catch((err: unknown) => {
      logger.error({ err }, "sandbox request failed");
      if (!res.headersSent) writeReply(res, { status: 500, body: { error: "internal error" } });
      else res.destroy();
    });
  });
  server.on("connection", (socket: Socket) => inFlight.watch(socket));
  server.on("clientError", (_err, socket) => socket.destroy());
  base = await listen(server, options.port ?? 0, options.host ?? "127.0.0.1");
  store.reset(); // now that `${sandbox}` upstreams can be resolved

  return {
    urls: { base, gateway: base, dashboard: base, portal: `${base}${portalPrefix}`, llm: `${base}${llmPrefix}`, inspect: `${base}/__sandbox` },
    credentials,
    inspect: inspector,
    idle: async () => inFlight.idle(),
    stop: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
      await dispatcher.close();
    },
  };
}
