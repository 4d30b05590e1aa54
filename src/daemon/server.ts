/**
 * The daemon's HTTP server (loopback by default): health, readiness, Prometheus metrics,
 * status, the state for merge-request plans (a bearer token of its own), a signed push
 * webhook and a bearer-token sync trigger (triggers.ts: authenticated
 * before anything is read). Bodies are bounded, slow clients are cut off, and no answer
 * carries a secret.
 */
import { createServer } from "node:http";
import type { IncomingMessage, Server, ServerResponse } from "node:http";
import type { AddressInfo } from "node:net";
import { ConfigError, ErrorCode } from "../errors.js";
import { answerDeadline, BodyTooLarge, listenError, writeReply } from "../http/http-io.js";
import type { Reply } from "../http/http-io.js";
import type { Logger } from "../logger.js";
import type { StateSnapshot, StateVersion } from "../record/state.js";
import { scrubDeep } from "../secrets/redaction.js";
import type { ConfigStatus } from "./config-reload.js";
import type { GatesyncConfig } from "../config/config.js";
import type { DaemonMetrics } from "./metrics.js";
import type { Reconciler } from "./reconciler.js";
import type { StatusPage } from "./ui/status-page.js";
import type { RunHistory } from "./ui/run-history.js";
import type { RunEntry } from "./run-record.js";
import { handleStateRead } from "./state-endpoint.js";
import { handleConfigRead } from "./config-endpoint.js";
import { ReadSlots, handleEnvironmentSync, handleSync, handleWebhook, isEnvironmentSyncPath } from "./triggers.js";
import type { EnvironmentSync, TriggerContext, TriggerRelay } from "./triggers.js";
import { ReplayGuard, safeEqual } from "./webhook.js";
import { handlePromote, promotePath } from "./promote-endpoint.js";
import type { PromoteRoute } from "./promote-endpoint.js";
import { freezePath, handleFreeze } from "./freeze-endpoint.js";
import type { FreezeRoute } from "./freeze-endpoint.js";

/** A recorded health as the status endpoint lists it: its verdict and when it was checked. */
const healthSummary = (health: { readonly ok: boolean; readonly checkedAt: string }): { ok: boolean; checkedAt: string } => ({
  ok: health.ok,
  checkedAt: health.checkedAt,
});

/** What the server reads of the reconcile loop (with environments: of all of them). */
export type ServedReconciler = Pick<Reconciler, "trigger" | "isStopping" | "synced"> & Partial<Pick<Reconciler, "validationOverdue">>;

/** What /status reads of the runs: the history's newest (ui/run-history.ts), the leader's on a standby. */
export type RunView = Pick<RunHistory, "fresh" | "newest" | "lastSuccess" | "synced">;

export interface DaemonServerOptions {
  /** `host:port`; port 0 picks a free one. */
  readonly listen: string;
  readonly reconciler: ServedReconciler;
  /** The runs /status names (with environments: the first environment's, as for `state`). */
  readonly runs: RunView;
  readonly metrics: DaemonMetrics;
  /** The state as /status and the pages read it: a shared, cached snapshot (ui/page-cache.ts). */
  readonly state: { read(): Promise<StateSnapshot>; readonly description: string };
  readonly logger: Logger;
  readonly sourceDescription: string;
  readonly webhookSecret?: string;
  readonly syncToken?: string;
  /** The variables gatesync.yaml names for them (`server.webhookSecretEnv`, `server.syncTokenEnv`): said in a 404 while unset. */
  readonly variables?: TriggerContext["variables"];
  /** Asked of the status page and /status when set (Bearer, or Basic with it as password). */
  readonly pagesToken?: string;
  /** How long a client has to take its whole answer (the live stream excepted). */
  readonly answerDeadlineMs?: number;
  /** `leader`, `standby` or `single`. */
  readonly role?: () => string;
  /** The operator's config in force: `GET /config` answers what of it a merge-request plan needs. */
  readonly operatorConfig?: () => GatesyncConfig;
  /** The config file in force, and a refused reload's errors. */
  readonly config?: () => ConfigStatus;
  readonly maxBodyBytes?: number;
  /** The status page in the browser (`/`, `/resources`, `/runs`, `/plan`). */
  readonly page?: StatusPage;
  /** Bearer token of `GET /state` (merge-request plans); absent: not served. */
  readonly stateToken?: string;
  /** With replicas: triggers a standby receives go to the leader. */
  readonly relay?: TriggerRelay;
  /** With environments: `/status` as a whole (each environment's own is under `/environments/NAME/status`). */
  readonly statusBody?: () => Promise<Record<string, unknown>>;
  /** With environments: answers the paths below `/environments/` (the pages' token is checked first); false when not one. */
  readonly routes?: (req: IncomingMessage, res: ServerResponse) => boolean;
  /** With environments: what `POST /environments/NAME/sync` runs (its token checked as for `/sync`). */
  readonly environmentSync?: EnvironmentSync;
  /** With environments: `POST /environments/NAME/promote` (promote-endpoint.ts), with a token of its own. */
  readonly promote?: PromoteRoute;
  /** With environments: `POST /environments/NAME/freeze` and `/unfreeze` (freeze-endpoint.ts), with the promotion token. */
  readonly freeze?: FreezeRoute;
}

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

const json = (status: number, body: unknown): Reply => ({ status, body });

export async function buildStatus(
  opts: Pick<DaemonServerOptions, "reconciler" | "runs" | "state" | "sourceDescription" | "role" | "config">,
): Promise<Record<string, unknown>> {
  await opts.runs.fresh();
  const state = await opts.state.read();
  let resources = resourcesOf.get(state);
  if (resources === undefined) {
    resources = scrubDeep(
      [...state.resources.values()]
        .sort((a, b) => (a.id < b.id ? -1 : 1))
        .map((x) => ({
          id: x.id,
          status: x.status,
          ...(x.serverId === undefined ? {} : { serverId: x.serverId }),
          ...(x.error === undefined ? {} : { error: x.error }),
          ...(x.health === undefined ? {} : { health: healthSummary(x.health.read()) }),
          ...(x.commit === undefined ? {} : { commit: x.commit }),
          updatedAt: x.updatedAt,
        })),
    );
    resourcesOf.set(state, resources);
  }
  return { ...scrubDeep(statusHead(opts, state)), resources };
}

/** `/status` without its resources (the status of every environment): the state's version is read, none of its records. */
export async function buildStatusHead(
  opts: Pick<DaemonServerOptions, "reconciler" | "runs" | "sourceDescription" | "role" | "config"> & { readonly version: () => Promise<StateVersion> },
): Promise<Record<string, unknown>> {
  await opts.runs.fresh();
  return scrubDeep(statusHead(opts, await opts.version()));
}

/** The resources of /status, listed once per snapshot of the state (the snapshot is shared and cached). */
const resourcesOf = new WeakMap<StateSnapshot, unknown[]>();

function statusHead(
  opts: Pick<DaemonServerOptions, "reconciler" | "runs" | "sourceDescription" | "role" | "config">,
  state: StateVersion,
): Record<string, unknown> {
  const r = opts.reconciler;
  const newest = opts.runs.newest();
  const success = opts.runs.lastSuccess();
  return {
    service: "gatesync",
    role: opts.role?.() ?? "single",
    ready: !r.isStopping,
    synced: opts.runs.synced,
    source: opts.sourceDescription,
    ...(opts.config === undefined ? {} : { config: opts.config() }),
    commit: success?.commit ?? success?.revision ?? null,
    lastSuccess: success === undefined ? null : { at: success.at, revision: success.revision },
    lastRun: newest === undefined ? null : lastRunOf(newest),
    plan: newest?.record.report.plan ?? null,
    state: { lineage: state.lineage, serial: state.serial },
  };
}

/** The newest run as /status names it: by whichever replica ran it, with its commit's author and subject. */
function lastRunOf(newest: RunEntry): Record<string, unknown> {
  const { record } = newest;
  const last = record.report;
  return {
    reason: record.trigger,
    result: record.outcome,
    startedAt: record.startedAt,
    durationMs: record.durationMs,
    revision: record.revision ?? null,
    ...(record.commit === undefined ? {} : { commit: record.commit }),
    ...(record.author === undefined ? {} : { author: record.author }),
    ...(record.subject === undefined ? {} : { subject: record.subject }),
    replica: record.replica,
    ...(newest.repeats === 0 ? {} : { repeats: newest.repeats, since: newest.firstAt }),
    ...(last.error === undefined ? {} : { error: last.error }),
    ...(last.diagnostics === undefined ? {} : { errors: last.diagnostics.filter((d) => d.severity === "error") }),
    // the governance rules' warnings, info and hints of an applied revision
    ...(last.ruleFindings === undefined ? {} : { ruleFindings: last.ruleFindings }),
    // operator settings the repository's gatesync.yaml writes, which the daemon ignores
    ...(last.ignoredSettings === undefined ? {} : { ignoredSettings: last.ignoredSettings }),
    ...(last.summary === undefined
      ? {}
      : {
          applied: record.counts.applied,
          failed: last.summary.failed,
          inDoubt: last.summary.inDoubt,
          blocked: last.summary.blocked,
          calls: last.summary.calls,
        }),
  };
}

/** Paths that never ask for the pages' token: probes and metrics, and the triggers (their own secrets). */
const openPaths = new Set(["/healthz", "/readyz", "/metrics", "/hooks/git", "/sync"]);

/** Whether the request carries the pages' token: `Bearer TOKEN`, or Basic with any user and TOKEN as password. */
function authorised(req: IncomingMessage, token: string): boolean {
  const header = req.headers.authorization ?? "";
  const bearer = /^Bearer\s+(\S+)$/i.exec(header)?.[1];
  if (bearer !== undefined) return safeEqual(bearer, token);
  const basic = /^Basic\s+(\S+)$/i.exec(header)?.[1];
  if (basic === undefined) return false;
  const decoded = Buffer.from(basic, "base64").toString("utf8");
  const colon = decoded.indexOf(":");
  return colon >= 0 && safeEqual(decoded.slice(colon + 1), token);
}

/** Open connections at most (a Prometheus scrape, probes, a few triggers and the status page need far fewer). */
export const maxConnections = 128;

/** Alive, unless a validation has run past its limit (a rule or a check that never returns: the daemon serves, but applies nothing). */
function health(reconciler: ServedReconciler): Reply {
  const overdue = reconciler.validationOverdue;
  if (overdue === undefined) return json(200, { status: "ok" });
  const seconds = (ms: number): number => Math.round(ms / 1000);
  return json(503, { status: "stuck", reason: `a validation has run for ${seconds(overdue.forMs)} s, past its limit of ${seconds(overdue.limitMs)} s` });
}

/** The JSON routes: probes, metrics, /status and the two triggers. */
async function route(req: IncomingMessage, opts: DaemonServerOptions, triggers: TriggerContext, slots: ReadSlots): Promise<Reply> {
  const path = new URL(req.url ?? "/", "http://x").pathname;
  const method = req.method ?? "GET";
  const get = (handler: () => Promise<Reply> | Reply): Promise<Reply> | Reply =>
    method === "GET" || method === "HEAD" ? handler() : json(405, { error: "method not allowed" });
  const post = (handler: () => Promise<Reply>): Promise<Reply> | Reply => (method === "POST" ? handler() : json(405, { error: "method not allowed" }));
  switch (path) {
    case "/healthz":
      return get(() => health(opts.reconciler));
    case "/readyz":
      // ready means serving (a standby serves status and metrics, and takes over when elected);
      // whether the repository is applied is `synced` (in /status and gatesync_synced)
      return get(() =>
        opts.reconciler.isStopping
          ? json(503, { status: "not ready", reason: "stopping" })
          : json(200, { status: "ready", role: opts.role?.() ?? "single", synced: opts.reconciler.synced }),
      );
    case "/metrics":
      return get(async () => ({
        status: 200,
        raw: Buffer.from(await opts.metrics.registry.metrics()),
        headers: { "content-type": opts.metrics.registry.contentType },
      }));
    case "/status":
      return get(async () => json(200, opts.statusBody === undefined ? await buildStatus(opts) : await opts.statusBody()));
    case "/state":
      return get(() => handleStateRead(req, opts.state, opts.stateToken));
    case "/config":
      return get(() => (opts.operatorConfig === undefined ? json(404, { error: "not found" }) : handleConfigRead(req, opts.operatorConfig(), opts.stateToken)));
    case "/hooks/git":
      return post(() => handleWebhook(req, triggers, slots));
    case "/sync":
      return post(() => handleSync(req, triggers));
    default: {
      const promoted = promotePath.exec(path)?.[1];
      if (promoted !== undefined) return handlePromote(req, promoted, opts.promote);
      const frozen = freezePath.exec(path);
      if (frozen !== null) return handleFreeze(req, frozen[1]!, frozen[2]!, opts.freeze);
      return handleEnvironmentSync(path, method, req, opts.environmentSync, triggers);
    }
  }
}

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

/** 401 for a page without the pages' token: the browser asks for it (Basic), a script sends it as a bearer token. */
function askForPagesToken(res: ServerResponse): void {
  res.writeHead(401, {
    "www-authenticate": 'Basic realm="gatesync", charset="UTF-8"',
    "content-type": "text/plain; charset=utf-8",
    "cache-control": "no-store",
  });
  res.end("authentication required: the token server.pagesTokenEnv names, as a bearer token or as the password\n");
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

  const handle = (req: IncomingMessage, res: ServerResponse): void => {
    const path = new URL(req.url ?? "/", "http://x").pathname;
    if (path !== "/ui/events") answerDeadline(res, opts.answerDeadlineMs ?? 10_000);
    const open = openPaths.has(path) || isEnvironmentSyncPath(path);
    if (opts.pagesToken !== undefined && !open && !authorised(req, opts.pagesToken)) return askForPagesToken(res);
    if (opts.routes?.(req, res) === true) return;
    if (opts.page?.handle(req, res) === true) return;
    route(req, opts, triggers, slots)
      .catch((err: unknown) =>
        err instanceof BodyTooLarge
          ? { status: 413, body: { error: "body too large" }, headers: { connection: "close" } }
          : (log.error({ err: (err as Error).message }, "request failed"), json(500, { error: "internal error" })),
      )
      .then((reply) => {
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
