/**
 * The HTTP request each receiver gets. Pure: the event or status in, method, URL, headers and
 * body out. Every string passes through the redaction layer before it is serialised.
 *
 * - webhook: JSON; `X-Gatesync-Signature: sha256=<hex>` is the HMAC-SHA256 of the exact body
 *   with the receiver's secret (as GitHub signs its webhooks); `X-Gatesync-Delivery` is one id
 *   for all tries of a delivery, so a receiver can drop repeats.
 * - slack: an incoming-webhook message `{ "text": … }`.
 * - github: POST {apiUrl}/repos/{owner}/{repo}/statuses/{sha} {state, target_url, description, context}.
 * - gitlab: POST {apiUrl}/projects/{id}/statuses/{sha} {state, target_url, description, name}.
 */
import { createHmac } from "node:crypto";
import { scrubDeep } from "../secrets/redaction.js";
import type { ReceiverConfig } from "../config/notifications.js";
import type { CommitState, CommitStatus, NotificationEvent } from "./events.js";

export interface OutgoingRequest {
  readonly method: "POST";
  readonly url: string;
  readonly headers: Record<string, string>;
  readonly body: string;
}

/** What a receiver's request is built from: the event or status, and the secrets it needs. */
export interface RequestContext {
  readonly deliveryId: string;
  readonly statusUrl: string;
  /** The receiver's URL, HMAC secret or token, read from the environment. */
  readonly url?: string;
  readonly secret?: string;
  readonly token?: string;
}

export function signature(secret: string, body: string): string {
  return `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
}

const json = { "content-type": "application/json", "user-agent": "gatesync" };

export function eventRequest(receiver: Extract<ReceiverConfig, { type: "webhook" | "slack" }>, event: NotificationEvent, ctx: RequestContext): OutgoingRequest {
  const payload = scrubDeep({ ...event, statusUrl: ctx.statusUrl });
  if (receiver.type === "slack") {
    const lines = [
      `*${payload.event}*: ${payload.summary}`,
      ...(payload.failed ?? []).slice(0, 10).map((f) => `• ${f.id}: ${f.message}`),
      ...(payload.inDoubt ?? []).slice(0, 10).map((f) => `• ${f.id}: ${f.message}`),
      ...(payload.checks ?? []).slice(0, 10).map((c) => `• check failed: ${c}`),
      `<${payload.statusUrl}|status>`,
    ];
    return { method: "POST", url: ctx.url ?? "", headers: json, body: JSON.stringify({ text: lines.join("\n") }) };
  }
  const body = JSON.stringify({ deliveryId: ctx.deliveryId, ...payload });
  return {
    method: "POST",
    url: ctx.url ?? receiver.url ?? "",
    headers: { ...json, "x-gatesync-event": event.event, "x-gatesync-delivery": ctx.deliveryId, "x-gatesync-signature": signature(ctx.secret ?? "", body) },
    body,
  };
}

const githubState: Record<CommitState, string> = { pending: "pending", success: "success", failure: "failure", "needs-person": "error" };
const gitlabState: Record<CommitState, string> = { pending: "running", success: "success", failure: "failed", "needs-person": "failed" };

export function statusRequest(receiver: Extract<ReceiverConfig, { type: "github" | "gitlab" }>, status: CommitStatus, ctx: RequestContext): OutgoingRequest {
  const description = scrubDeep(status.description);
  const base = receiver.apiUrl.replace(/\/+$/, "");
  const sha = encodeURIComponent(status.commit);
  if (receiver.type === "github") {
    return {
      method: "POST",
      url: `${base}/repos/${receiver.repository.split("/").map(encodeURIComponent).join("/")}/statuses/${sha}`,
      headers: { ...json, accept: "application/vnd.github+json", "x-github-api-version": "2022-11-28", authorization: `Bearer ${ctx.token ?? ""}` },
      body: JSON.stringify({ state: githubState[status.state], target_url: ctx.statusUrl, description, context: receiver.context }),
    };
  }
  return {
    method: "POST",
    url: `${base}/projects/${encodeURIComponent(receiver.project)}/statuses/${sha}`,
    headers: { ...json, "private-token": ctx.token ?? "" },
    body: JSON.stringify({ state: gitlabState[status.state], target_url: ctx.statusUrl, description, name: receiver.context }),
  };
}
