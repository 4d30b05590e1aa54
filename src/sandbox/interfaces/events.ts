/**
 * Delivers a portal event to every webhook subscribed to it: the webhook's Method, URL and
 * headers, body {"Event","Message","Timestamp"}, giving up after Timeout seconds (0: no limit).
 */
import { request } from "undici";
import type { Dispatcher } from "undici";
import type { Json, SandboxStore } from "../store.js";

export interface Delivery {
  readonly webhookId: string;
  readonly status?: number;
  readonly error?: string;
}

export async function deliverEvent(store: SandboxStore, dispatcher: Dispatcher, event: string, message: Json): Promise<Delivery[]> {
  const subscribed = [...store.portalWebhooks.values()].filter((w) => Array.isArray(w.Events) && w.Events.includes(event));
  const body = JSON.stringify({ Event: event, Message: message, Timestamp: new Date().toISOString() });
  const deliveries: Delivery[] = [];
  // One at a time: a portal delivers events in order, and the list is short.
  for (const w of subscribed) {
    const headers: Record<string, string> = { "content-type": "application/json" };
    for (const h of Array.isArray(w.Headers) ? (w.Headers as Json[]) : []) {
      if (typeof h.Name === "string" && typeof h.Value === "string") headers[h.Name] = h.Value;
    }
    const timeoutMs = typeof w.Timeout === "number" && w.Timeout > 0 ? w.Timeout * 1000 : undefined;
    try {
      const answer = await request(String(w.URL), {
        method: String(w.Method),
        headers,
        body: w.Method === "GET" ? null : body,
        dispatcher,
        ...(timeoutMs === undefined ? {} : { headersTimeout: timeoutMs, bodyTimeout: timeoutMs, signal: AbortSignal.timeout(timeoutMs) }),
      });
      await answer.body.dump();
      deliveries.push({ webhookId: String(w.ID), status: answer.statusCode });
    } catch (err) {
      deliveries.push({ webhookId: String(w.ID), error: err instanceof Error ? err.name : "error" });
    }
  }
  return deliveries;
}
