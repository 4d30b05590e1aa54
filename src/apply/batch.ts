/**
 * Gateway changes grouped through operation 4 at the listen path of a loopback API (an API
 * whose upstream is the gateway's own `/gw/`). Each sub-request carries the admin credential
 * and the loopback API's own key. Results arrive in completion order and are matched by
 * `relative_url`; a missing item or a `code: 0` item means that sub-request's outcome is
 * unknown. A batch route that answers 401, 403, 404 or 405 is unavailable (without batch
 * processing the path is plain API traffic, whose authentication may refuse it): the caller
 * falls back.
 */
import type { CallOutcome, InterfaceClient } from "./http-client.js";
import { parseRetryAfter } from "./http-client.js";
import type { InterfaceQueue } from "./queues.js";

export interface BatchItem {
  /** Resource id. */
  readonly id: string;
  readonly method: string;
  /** Below the loopback listen path: `org/keys/k1?reset_quota=1`. */
  readonly relativeUrl: string;
  readonly body: string | undefined;
}

export type BatchResult = { readonly kind: "results"; readonly outcomes: Map<string, CallOutcome> } | { readonly kind: "unavailable"; readonly why: string };

export interface BatchSettings {
  readonly listenPath: string;
  readonly loopbackKey: string;
  readonly adminKey: string;
  readonly maxSize: number;
}

/** The sub-request address of a gateway management path (`/gw/org/keys/k?x=1` → `org/keys/k?x=1`). */
export function relativeUrl(path: string): string {
  return path.replace(/^\/gw\//, "");
}

/** Bytes of sub-request bodies one batch call carries at most (bodies travel escaped in JSON). */
export const maxBatchBytes = 512 * 1024;

/**
 * Splits items into batches of at most `maxSize` sub-requests and about `maxBytes` of bodies,
 * with no relative_url twice in one batch. An item larger than `maxBytes` goes alone.
 */
export function chunk(items: readonly BatchItem[], maxSize: number, maxBytes = maxBatchBytes): BatchItem[][] {
  const batches: Array<{ items: BatchItem[]; bytes: number }> = [];
  for (const item of items) {
    const bytes = (item.body?.length ?? 0) + item.relativeUrl.length + 200;
    let target = batches.find((b) => b.items.length < maxSize && (b.bytes + bytes <= maxBytes || b.items.length === 0) && !b.items.some((x) => x.relativeUrl === item.relativeUrl));
    if (target === undefined) batches.push((target = { items: [], bytes: 0 }));
    target.items.push(item);
    target.bytes += bytes;
  }
  return batches.map((b) => b.items);
}

/** The batch route: the gateway registers it with the trailing slash (without it, the path is API traffic). */
function batchPath(listenPath: string): string {
  const trimmed = listenPath.replace(/^\/+|\/+$/g, "");
  return trimmed === "" ? "/gw/batch/" : `/${trimmed}/gw/batch/`;
}

export class BatchSender {
  /** Batch calls sent, and sub-requests carried. */
  calls = 0;
  carried = 0;

  constructor(
    private readonly client: InterfaceClient,
    private readonly queue: InterfaceQueue,
    readonly settings: BatchSettings,
  ) {}

  /** Sends one batch; `before` runs when the call is about to leave (intents are written there). */
  async send(items: readonly BatchItem[], signal?: AbortSignal, before?: () => Promise<void>): Promise<BatchResult | { readonly kind: "whole"; readonly outcome: CallOutcome }> {
    const requests = items.map((i) => ({
      method: i.method,
      relative_url: i.relativeUrl,
      headers: { "x-gw-authorization": this.settings.adminKey, authorization: this.settings.loopbackKey, "content-type": "application/json" },
      ...(i.body === undefined ? {} : { body: i.body }),
    }));
    const outcome = await this.queue.run(async () => {
      await before?.();
      return this.client.call({ method: "POST", path: batchPath(this.settings.listenPath), body: { requests }, anonymous: true });
    }, signal);
    this.calls++;
    if (outcome.kind === "answered" && [401, 403, 404, 405].includes(outcome.status)) {
      return { kind: "unavailable", why: `the batch route ${batchPath(this.settings.listenPath)} answered ${outcome.status}` };
    }
    if (outcome.kind !== "answered" || outcome.status < 200 || outcome.status >= 300) return { kind: "whole", outcome };
    if (!Array.isArray(outcome.body)) return { kind: "unavailable", why: `the batch route ${batchPath(this.settings.listenPath)} did not answer with a list of results` };
    this.carried += items.length;
    const byUrl = new Map<string, Record<string, unknown>>();
    for (const r of outcome.body as unknown[]) {
      if (r === null || typeof r !== "object") continue;
      const item = r as Record<string, unknown>;
      if (typeof item.relative_url === "string" && item.relative_url !== "" && typeof item.code === "number" && item.code !== 0) byUrl.set(item.relative_url, item);
    }
    const outcomes = new Map<string, CallOutcome>();
    for (const i of items) {
      const r = byUrl.get(i.relativeUrl);
      if (r === undefined) {
        outcomes.set(i.id, { kind: "unknown", error: "no result for this sub-request in the batch answer (it failed below HTTP, or was lost)" });
        continue;
      }
      const text = typeof r.body === "string" ? r.body : "";
      let body: unknown = text;
      try {
        body = text === "" ? undefined : JSON.parse(text);
      } catch {
        // keep the text
      }
      const headers = (r.headers ?? {}) as Record<string, string[] | undefined>;
      outcomes.set(i.id, { kind: "answered", status: r.code as number, retryAfterMs: parseRetryAfter(headers["Retry-After"]), body, text });
    }
    return { kind: "results", outcomes };
  }
}
