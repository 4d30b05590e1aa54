/**
 * Push webhooks: GitHub (`X-Hub-Signature-256: sha256=<HMAC of the body>`) and GitLab
 * (`X-Gitlab-Token: <secret>`), both compared in constant time. A delivery id seen before is
 * a replay.
 */
import { createHmac, timingSafeEqual } from "node:crypto";
import type { IncomingHttpHeaders } from "node:http";

export type WebhookVerdict =
  { readonly ok: true; readonly delivery: string | undefined; readonly provider: "github" | "gitlab" } | { readonly ok: false; readonly reason: string };

export function safeEqual(a: string, b: string): boolean {
  const x = Buffer.from(a);
  const y = Buffer.from(b);
  // Compare equal-length buffers so that the time does not tell the length either.
  const pad = Buffer.alloc(Math.max(x.length, y.length));
  const xx = Buffer.concat([x, pad]).subarray(0, pad.length);
  const yy = Buffer.concat([y, pad]).subarray(0, pad.length);
  return timingSafeEqual(xx, yy) && x.length === y.length;
}

function header(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

export function verifyWebhook(headers: IncomingHttpHeaders, body: Buffer, secret: string): WebhookVerdict {
  const github = header(headers, "x-hub-signature-256");
  if (github !== undefined) {
    const expected = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
    return safeEqual(github, expected)
      ? { ok: true, delivery: header(headers, "x-github-delivery"), provider: "github" }
      : { ok: false, reason: "bad signature" };
  }
  const gitlab = header(headers, "x-gitlab-token");
  if (gitlab !== undefined) {
    return safeEqual(gitlab, secret) ? { ok: true, delivery: header(headers, "x-gitlab-event-uuid"), provider: "gitlab" } : { ok: false, reason: "bad token" };
  }
  return { ok: false, reason: "no signature" };
}

/** Remembers the last `size` delivery ids. */
export class ReplayGuard {
  private readonly seen = new Set<string>();
  constructor(private readonly size = 1000) {}

  /** True the first time an id is seen. */
  accept(id: string): boolean {
    if (this.seen.has(id)) return false;
    this.seen.add(id);
    if (this.seen.size > this.size) this.seen.delete(this.seen.values().next().value as string);
    return true;
  }

  /** Forgets an id (its delivery was refused: the redelivery is not a replay). */
  forget(id: string): void {
    this.seen.delete(id);
  }
}
