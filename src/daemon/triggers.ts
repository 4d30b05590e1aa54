/**
 * The daemon's two triggers, authenticating before they read. `POST /sync` checks its bearer
 * token and never reads the body. `POST /hooks/git` refuses a declared length over the limit,
 * checks a GitLab token (a header) before reading anything, refuses a request with no
 * signature at all, and reads a GitHub body (its HMAC covers the body) only while fewer than
 * `maxUnauthenticatedReads` such bodies are being read: the rest get 503 with Retry-After.
 * So a flood of unauthenticated requests costs neither memory nor a run.
 */
import type { IncomingMessage } from "node:http";
import type { Reply } from "../http/http-io.js";
import { readBody } from "../http/http-io.js";
import type { Logger } from "../logger.js";
import type { Reconciler } from "./reconciler.js";
import type { ReplayGuard } from "./webhook.js";
import { safeEqual, verifyWebhook } from "./webhook.js";

/** Unauthenticated bodies read at once, at most. */
export const maxUnauthenticatedReads = 4;

export interface TriggerContext {
  readonly reconciler: Reconciler;
  readonly replays: ReplayGuard;
  readonly log: Logger;
  readonly limit: number;
  readonly webhookSecret?: string;
  readonly syncToken?: string;
  /** The variables gatesync.yaml names for the secret and the token, when it names them. */
  readonly variables: { readonly webhookSecretEnv?: string | undefined; readonly syncTokenEnv?: string | undefined };
}

/** Why a trigger answers 404, and what to set so that it works. */
export function notConfigured(trigger: string, setting: string, variable: string | undefined): string {
  return variable === undefined
    ? `${trigger} is not configured: name an environment variable in ${setting} in gatesync.yaml and set it in the daemon's environment`
    : `${trigger} is not configured: ${variable} (named by ${setting}) is not set in the daemon's environment`;
}

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

export function handleSync(req: IncomingMessage, ctx: TriggerContext): Reply {
  const extra = hasBody(req) ? close : {};
  if (ctx.syncToken === undefined) return { status: 404, body: { error: notConfigured("the sync trigger", "server.syncTokenEnv", ctx.variables.syncTokenEnv) }, headers: extra };
  if (!safeEqual(req.headers.authorization ?? "", `Bearer ${ctx.syncToken}`)) return refuse(401, "invalid or missing token");
  ctx.reconciler.trigger("sync");
  return { status: 202, body: { status: "accepted" }, headers: extra };
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
  if (verdict.delivery !== undefined && !ctx.replays.accept(verdict.delivery)) return { status: 409, body: { error: "delivery already received" }, headers: extra };
  ctx.reconciler.trigger("webhook");
  return { status: 202, body: { status: "accepted" }, headers: extra };
}

function unauthenticated(ctx: TriggerContext, reason: string): Reply {
  ctx.log.warn({ reason }, "webhook refused");
  return refuse(401, "invalid or missing signature");
}
