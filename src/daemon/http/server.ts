/**
 * The daemon's HTTP server (loopback by default). What it serves is one route table
 * (http/route-table.ts: method, path, the credential each route takes, handler), answered by
 * http/dispatch.ts: every route authenticated before anything is read. Bodies are bounded, slow
 * clients are cut off, and no answer carries a secret.
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ConfigError, ErrorCode } from "../../errors.js";
import { answerDeadline, BodyTooLarge, listenError, writeReply } from "../../http/http-io.js";
import type { Reply } from "../../http/http-io.js";
import { compileRoutes, dispatch, resolveRoute } from "./dispatch.js";
import { routeTable } from "./route-table.js";
import type { DaemonServerOptions, Served } from "./served.js";
import { ReadSlots } from "./triggers.js";
import type { TriggerContext } from "./triggers.js";
import { ReplayGuard } from "./webhook.js";

export interface DaemonServer {
  readonly url: string;
  close(): Promise<void>;
}

/** `HOST:PORT`, `[IPv6]:PORT` or a bare port (on the loopback address); anything else is refused. */
export function parseListen(listen: string): { host: string; port: number } {
  const m = /^(?:(?:\[([0-9A-Fa-f:.]+)\]|([^:[\]\s]+)):)?(\d{1,5})$/.exec(listen.trim());
  const port = Number(m?.[3]);
  if (m === null || port > 65535) {
    throw new ConfigError(ErrorCode.CONFIG_INVALID, `cannot listen on ${JSON.stringify(listen)}: it is not HOST:PORT`, {
      hint: "set server.listen (or --listen) to e.g. 127.0.0.1:9464, [::1]:9464, or 0.0.0.0:9464 inside a container",
    });
  }
  return { host: m[1] ?? m[2] ?? "127.0.0.1", port };
}

/** Open connections at most (a Prometheus scrape, probes, a few triggers and the status page need far fewer). */
export const maxConnections = 128;

const routes = compileRoutes(routeTable);

/** Listens on `host:port` and answers the server's URL. */
async function listenOn(server: Server, listen: string): Promise<string> {
  const { host, port } = parseListen(listen);
  await new Promise<void>((resolve, reject) => {
    server.once("error", (err: NodeJS.ErrnoException) => reject(listenError(listen, err, "choose another server.listen (or --listen)")));
    server.listen(port, host, () => resolve());
  });
  const address = server.address() as AddressInfo;
  return `http://${address.family === "IPv6" ? `[${address.address}]` : address.address}:${address.port}`;
}

export async function startDaemonServer(opts: DaemonServerOptions): Promise<DaemonServer> {
  const limit = opts.maxBodyBytes ?? 1024 * 1024;
  const log = opts.logger.child({ component: "http" });
  const slots = new ReadSlots();
  const triggers: TriggerContext = {
    reconciler: opts.reconciler,
    replays: new ReplayGuard(),
    log,
    limit,
    ...(opts.webhookSecret === undefined ? {} : { webhookSecret: opts.webhookSecret }),
    ...(opts.syncToken === undefined ? {} : { syncToken: opts.syncToken }),
    ...(opts.relay === undefined ? {} : { relay: opts.relay }),
    variables: opts.variables ?? {},
  };

  const environments = opts.environments;
  const credentials = { pagesToken: opts.pagesToken, stateToken: opts.stateToken, promote: environments.promote, triggers };
  const served: Served = { opts, environments, triggers, slots, credentials };
  const implicit = environments.implicit ? environments.list[0]!.name : undefined;

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const resolved = resolveRoute(routes, req.url ?? "/", implicit);
    if (resolved?.rows.some((c) => c.route.stream === true) !== true) answerDeadline(res, opts.answerDeadlineMs ?? 10_000);
    dispatch(resolved, req, res, served)
      .catch((err: unknown): Reply =>
        err instanceof BodyTooLarge
          ? { status: 413, body: { error: "body too large" }, headers: { connection: "close" } }
          : (log.error({ err: (err as Error).message }, "request failed"), { status: 500, body: { error: "internal error" } }),
      )
      .then((reply) => {
        if (reply === "answered") return;
        // a refused request's body is never read: once the answer is out, the connection goes
        if (reply.headers?.connection === "close") {
          req.socket.pause();
          res.once("finish", () => req.socket.destroy());
        }
        writeReply(res, reply);
      })
      .catch(() => res.destroy());
  };

  // timeouts are checked every second (Node checks every 30 s by default): slow clients are cut off
  const server: Server = createServer({ headersTimeout: 5_000, requestTimeout: 10_000, keepAliveTimeout: 5_000, connectionsCheckingInterval: 1_000 }, handle);
  server.on("clientError", (_err, socket) => socket.destroy());
  // connections past this are closed as they arrive, unread: a flood cannot grow the process without bound
  server.maxConnections = maxConnections;
  const url = await listenOn(server, opts.listen);
  log.info({ url }, "http server listening");
  return {
    url,
    close: async () => {
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
