/**
 * The daemon's two triggers, authenticating before they read. `POST /sync` checks its bearer
 * token and never reads the body. `POST /hooks/git` refuses a declared length over the limit,
 * checks a GitLab token (a header) before reading anything, refuses a request with no
 * signature at all, and reads a GitHub body (its HMAC covers the body) only while fewer than
 * `maxUnauthenticatedReads` such bodies are being read: the rest get 503 with Retry-After.
 * So a flood of unauthenticated requests costs neither memory nor a run.
 *
 * With environments, `POST /environments/NAME/sync` is the sync trigger of that environment
 * alone: the same token, and in a fleet only that environment's leader is asked.
 *
 * An authenticated trigger on a standby replica is carried to the leader (the fleet's relay over
 * PostgreSQL LISTEN/NOTIFY, src/fleet/) and answered 202 only once the leader acknowledged it;
 * when no leader does, 503 with Retry-After, so that the sender delivers it again — never a 202
 * for work nobody will do.
 */
import type { IncomingMessage } from "node:http";
import type { Reply } from "../../http/http-io.js";
import { readBody } from "../../http/http-io.js";
import type { Logger } from "../../logger.js";
import { validTraceparent } from "../../telemetry/traceparent.js";
import type { Reconciler } from "../loop/reconciler.js";
import type { ReplayGuard } from "./webhook.js";
import { safeEqual, verifyWebhook } from "./webhook.js";

/** Unauthenticated bodies read at once, at most. */
export const maxUnauthenticatedReads = 4;

export interface TriggerContext {
  readonly reconciler: Pick<Reconciler, "trigger">;
  readonly replays: ReplayGuard;
  readonly log: Logger;
  readonly limit: number;
  readonly webhookSecret?: string;
  readonly syncToken?: string;
  /** With replicas: whether this one is the leader, and the way to the leader when it is not. */
  readonly relay?: TriggerRelay;
  /** The variables gatesync.yaml names for the secret and the token, when it names them. */
  readonly variables: { readonly webhookSecretEnv?: string | undefined; readonly syncTokenEnv?: string | undefined };
}

/** Why a trigger answers 404, and what to set so that it works. */
export function notConfigured(trigger: string, setting: string, variable: string | undefined): string {
  return variable === undefined
    ? `${trigger} is not configured: name an environment variable in ${setting} in gatesync.yaml and set it in the daemon's environment`
    : `${trigger} is not configured: ${variable} (named by ${setting}) is not set in the daemon's environment`;
}

/** The triggers a standby carries to the leader. */
export type ForwardedReason = "sync" | "webhook";

export type ForwardResult = { readonly ok: true; readonly leader: string; readonly ms: number } | { readonly ok: false; readonly why: string };

export interface TriggerRelay {
  isLeader(): boolean;
  /** Has the leader run the trigger, joining the trace `traceparent` names (checked: traceparent.ts). */
  forward(reason: ForwardedReason, traceparent: string | undefined): Promise<ForwardResult>;
}

/** Seconds a sender is asked to wait before delivering again when no leader took the trigger. */
export const noLeaderRetryAfterSeconds = 5;

/** Counts bodies being read before their sender is known. */
export class ReadSlots {
  private used = 0;
  constructor(private readonly max = maxUnauthenticatedReads) {}

  tryAcquire(): boolean {
    if (this.used >= this.max) return false;
    this.used++;
    return true;
  }

  release(): void {
    this.used--;
  }
}

// a request answered without its body being read closes its connection: nothing more is read from it
const close = { connection: "close" };
const refuse = (status: number, error: string, headers: Record<string, string> = {}): Reply => ({ status, body: { error }, headers: { ...close, ...headers } });
const hasBody = (req: IncomingMessage): boolean => req.headers["transfer-encoding"] !== undefined || Number(req.headers["content-length"] ?? "0") > 0;

/** The W3C trace context an authenticated trigger carries (its run joins that trace: run-span.ts), when it is one (traceparent.ts). */
const traceparentOf = (req: IncomingMessage): string | undefined => validTraceparent(req.headers.traceparent);

/** `POST /sync`, its token checked first (the route table's `sync` credential: http/credentials.ts). */
export async function handleSync(req: IncomingMessage, ctx: TriggerContext): Promise<Reply> {
  return accept(ctx, "sync", hasBody(req) ? close : {}, undefined, traceparentOf(req));
}

/** Why a sync trigger is not taken (no token configured, or not the token); undefined when it is. */
export function syncRefusal(req: IncomingMessage, ctx: TriggerContext): Reply | undefined {
  if (ctx.syncToken === undefined)
    return {
      status: 404,
      body: { error: notConfigured("the sync trigger", "server.syncTokenEnv", ctx.variables.syncTokenEnv) },
      headers: hasBody(req) ? close : {},
    };
  if (!safeEqual(req.headers.authorization ?? "", `Bearer ${ctx.syncToken}`)) return refuse(401, "invalid or missing token");
  return undefined;
}

/** Runs the trigger here (the leader, or a single daemon), or has the leader run it; 503 when none will. */
async function accept(
  ctx: TriggerContext,
  reason: ForwardedReason,
  headers: Record<string, string>,
  onRefused?: () => void,
  traceparent?: string,
): Promise<Reply> {
  if (ctx.relay === undefined || ctx.relay.isLeader()) {
    ctx.reconciler.trigger(reason, traceparent);
    return { status: 202, body: { status: "accepted" }, headers };
  }
  const forwarded = await ctx.relay.forward(reason, traceparent);
  if (forwarded.ok) {
    ctx.log.info({ reason, leader: forwarded.leader, ms: forwarded.ms }, "trigger forwarded to the leader");
    return { status: 202, body: { status: "accepted", forwardedTo: "leader" }, headers };
  }
  onRefused?.();
  ctx.log.warn({ reason, why: forwarded.why }, "trigger refused: this replica is a standby and no leader took it");
  return {
    status: 503,
    body: { error: `this replica is a standby and ${forwarded.why}: deliver it again` },
    headers: { ...headers, "retry-after": String(noLeaderRetryAfterSeconds) },
  };
}

export async function handleWebhook(req: IncomingMessage, ctx: TriggerContext, slots: ReadSlots): Promise<Reply> {
  if (ctx.webhookSecret === undefined) return refuse(404, notConfigured("the push webhook", "server.webhookSecretEnv", ctx.variables.webhookSecretEnv));
  if (Number(req.headers["content-length"] ?? "0") > ctx.limit) return refuse(413, "body too large");
  let body: Buffer = Buffer.alloc(0);
  if (req.headers["x-gitlab-token"] === undefined) {
    if (req.headers["x-hub-signature-256"] === undefined) return unauthenticated(ctx, "no signature");
    if (!slots.tryAcquire()) return refuse(503, "too many unauthenticated requests at once", { "retry-after": "1" });
    try {
      body = await readBody(req, ctx.limit);
    } finally {
      slots.release();
    }
  }
  const verdict = verifyWebhook(req.headers, body, ctx.webhookSecret);
  if (!verdict.ok) return unauthenticated(ctx, verdict.reason);
  const extra = body.length === 0 && hasBody(req) ? close : {};
  const delivery = verdict.delivery;
  if (delivery !== undefined && !ctx.replays.accept(delivery)) return { status: 409, body: { error: "delivery already received" }, headers: extra };
  // a refused delivery is delivered again with the same id: it must not count as a replay then
  return accept(ctx, "webhook", extra, () => delivery !== undefined && ctx.replays.forget(delivery), traceparentOf(req));
}

function unauthenticated(ctx: TriggerContext, reason: string): Reply {
  ctx.log.warn({ reason }, "webhook refused");
  return refuse(401, "invalid or missing signature");
}

/** With environments: what `POST /environments/NAME/sync` runs — that environment alone, here or at its leader (undefined for a name that is none). */
export interface EnvironmentSync {
  readonly names: readonly string[];
  of(name: string): Pick<TriggerContext, "reconciler" | "relay"> | undefined;
}

/** The environment a `/environments/NAME/sync` path names, decoded (undefined when it does not decode). */
function syncedEnvironment(encoded: string): string | undefined {
  try {
    return decodeURIComponent(encoded);
  } catch {
    return undefined;
  }
}

/**
 * `POST /environments/NAME/sync`, past its token (the route table checks it before the name:
 * the environments are named only to its holder); 404 for a name that is none.
 */
export function handleEnvironmentSync(
  encoded: string,
  req: IncomingMessage,
  environments: EnvironmentSync | undefined,
  ctx: TriggerContext,
): Promise<Reply> | Reply {
  const name = syncedEnvironment(encoded);
  const one = name === undefined ? undefined : environments?.of(name);
  if (one === undefined || environments === undefined)
    return { status: 404, body: { error: "no such environment", environments: environments?.names ?? [] }, headers: hasBody(req) ? close : {} };
  // the relay to every environment's leader does not apply: only this one's leader is asked
  const { relay: _every, ...shared } = ctx;
  return accept({ ...shared, ...one }, "sync", hasBody(req) ? close : {}, undefined, traceparentOf(req));
}
