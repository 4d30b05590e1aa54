/**
 * Gateway changes grouped through operation 4 at the listen path of a loopback API (an API
 * whose upstream is the gateway's own `/gw/`). Each sub-request carries the admin credential
 * and the loopback API's own key. Results arrive in completion order and are matched by
 * `relative_url`; a missing item or a `code: 0` item means that sub-request's outcome is
 * unknown.
 *
 * The route is `{listen_path}/gw/batch/`, with its trailing slash, as production registers
 * it. Only an answer that proves the batch was not processed — 401 or 403 (the loopback API's
 * authentication refusing plain traffic), 404 or 405 (no such route) — lets the form without
 * the slash be tried, once, and then the caller fall back to direct calls. Any other answer
 * may have been processed: a 2xx that is not the list of results, a timeout or a reset leaves
 * every sub-request's outcome unknown.
 */
import type { CallOutcome, Caller } from "../http-client.js";
import { parseRetryAfter, rewrittenPath } from "../http-client.js";
import { InternalError } from "../../errors.js";
import { batchRoute, relativeUrlOf } from "../../kinds/api-definition-checks.js";
import type { Logger } from "../../logger.js";
import type { InterfaceQueue } from "../pace/queues.js";
import type { OperationName } from "../../contract/operations.js";

export interface BatchItem {
  /** Resource id. */
  readonly id: string;
  readonly method: string;
  /** Below the loopback listen path: `org/keys/k1?reset_quota=1`. */
  readonly relativeUrl: string;
  readonly body: string | undefined;
  /** The operation it carries: a 2xx result counts only with that operation's answer (see answeredAsGateway). */
  readonly operation?: OperationName;
}

export type BatchResult =
  | { readonly kind: "results"; readonly outcomes: Map<string, CallOutcome> }
  /** Certainly not processed, in either form of the route: send directly. */
  | { readonly kind: "unavailable"; readonly why: string }
  /** One outcome for every sub-request. */
  | { readonly kind: "whole"; readonly outcome: CallOutcome };

export interface BatchSettings {
  readonly listenPath: string;
  /**
   * The forms of the route to try, in order: with the trailing slash (true), without (false).
   * Production (and the sandbox) register it with the slash, so it comes first; the form
   * without is the fallback for a gateway that answers only that one.
   */
  readonly routeForms?: readonly boolean[];
  readonly loopbackKey: string;
  readonly adminKey: string;
  readonly maxSize: number;
}

/** The sub-request address of a gateway management path (`/gw/org/keys/k?x=1` → `org/keys/k?x=1`). */
export function relativeUrl(path: string): string {
  return relativeUrlOf(path.replace(/^\/gw\//, ""));
}

/** Answers that prove the batch route did not take the request. */
const notProcessed = new Set([401, 403, 404, 405]);

/** Bytes of sub-request bodies one batch call carries at most (bodies travel escaped in JSON). */
export const maxBatchBytes = 512 * 1024;

/**
 * Packs items into batches of at most `maxSize` sub-requests and about `maxBytes` of bodies,
 * with no relative_url twice in one batch (an item larger than `maxBytes` goes alone), as they
 * come: each item joins the first open batch it fits; a batch leaves once it is full, or when
 * a new one would open beyond `window` open batches (the oldest then leaves). Items are read
 * only as batches are asked for, so a caller sending batches as they come holds few bodies.
 */
export function* packBatches(
  items: Iterable<BatchItem>,
  maxSize: number,
  maxBytes = maxBatchBytes,
  window = Number.POSITIVE_INFINITY,
): Generator<BatchItem[], void, undefined> {
  const open: Array<{ items: BatchItem[]; bytes: number; urls: Set<string> }> = [];
  for (const item of items) {
    const bytes = (item.body?.length ?? 0) + item.relativeUrl.length + 200;
    let target = open.find((b) => (b.bytes + bytes <= maxBytes || b.items.length === 0) && !b.urls.has(item.relativeUrl));
    if (target === undefined) {
      if (open.length >= window) yield open.shift()!.items;
      open.push((target = { items: [], bytes: 0, urls: new Set() }));
    }
    target.items.push(item);
    target.bytes += bytes;
    target.urls.add(item.relativeUrl);
    if (target.items.length >= maxSize) {
      open.splice(open.indexOf(target), 1);
      yield target.items;
    }
  }
  for (const b of open) yield b.items;
}

/** All the batches of `items` at once (see packBatches). */
export function chunk(items: readonly BatchItem[], maxSize: number, maxBytes = maxBatchBytes): BatchItem[][] {
  return [...packBatches(items, maxSize, maxBytes)];
}

export class BatchSender {
  /** Batch calls sent, and sub-requests carried. */
  calls = 0;
  carried = 0;
  /** The forms of the route still to try, in order: with the trailing slash (true), without. */
  private readonly forms: boolean[];
  /** What each form answered when it did not take the batch. */
  private readonly refusals: string[] = [];
  private warned = false;

  constructor(
    private readonly client: Caller,
    private readonly queue: InterfaceQueue,
    readonly settings: BatchSettings,
    private readonly logger: Logger,
  ) {
    this.forms = [...(settings.routeForms ?? [true, false])];
  }

  /** The route form in use when it is not production's (for the summary). */
  get routeNote(): string | undefined {
    return this.forms[0] === false && this.refusals.length > 0
      ? `the batch route answered only without its trailing slash (${batchRoute(this.settings.listenPath, false)})`
      : undefined;
  }

  /** Sends one batch; `before` runs when the call is about to leave (intents are written there). */
  async send(items: readonly BatchItem[], signal?: AbortSignal, before?: () => Promise<void>): Promise<BatchResult> {
    // the gateway resolves each sub-request's address as a URL below the loopback: the same guard as a direct call's
    for (const i of items) {
      const rewritten = rewrittenPath(i.relativeUrl);
      if (rewritten !== undefined) throw new InternalError(`refused to batch ${i.method} ${i.relativeUrl}: ${rewritten}`);
    }
    const requests = items.map((i) => ({
      method: i.method,
      relative_url: i.relativeUrl,
      headers: { "x-gw-authorization": this.settings.adminKey, authorization: this.settings.loopbackKey, "content-type": "application/json" },
      ...(i.body === undefined ? {} : { body: i.body }),
    }));
    for (;;) {
      const slash = this.forms[0];
      if (slash === undefined) return { kind: "unavailable", why: this.refusals.join("; ") };
      const path = batchRoute(this.settings.listenPath, slash);
      const outcome = await this.queue.run(() => this.client.call({ method: "POST", path, body: { requests }, anonymous: true }), signal, before);
      this.calls++;
      if (outcome.kind !== "answered" || !notProcessed.has(outcome.status)) return this.read(items, outcome, path);
      // not processed: the other form, once, then direct calls
      if (this.forms[0] === slash) {
        this.refusals.push(`the batch route ${path} answered ${outcome.status}`);
        this.forms.shift();
      }
    }
  }

  private read(items: readonly BatchItem[], outcome: CallOutcome, path: string): BatchResult {
    if (outcome.kind !== "answered" || outcome.status < 200 || outcome.status >= 300) return { kind: "whole", outcome };
    if (this.routeNote !== undefined && !this.warned) {
      this.warned = true;
      this.logger.warn({ route: path, refused: this.refusals[0] }, "batch route answered only without its trailing slash: batching continues there");
    }
    const misshapen = notResults(outcome.body);
    if (misshapen !== undefined) {
      return {
        kind: "whole",
        outcome: {
          kind: "unknown",
          error: `the batch route ${path} answered ${outcome.status} without the list of results the gateway gives (${misshapen}: ${outcome.text.slice(0, 60).trim() || "an empty body"}): every sub-request's outcome is unknown`,
        },
      };
    }
    this.carried += items.length;
    const byUrl = new Map<string, ResultItem>();
    for (const item of outcome.body as ResultItem[]) if (item.relative_url !== "" && item.code !== 0) byUrl.set(item.relative_url, item);
    return { kind: "results", outcomes: new Map(items.map((i) => [i.id, subOutcome(byUrl.get(i.relativeUrl), i.operation)])) };
  }
}

/** A result item as the gateway writes every one (reference, operation 4): a failed sub-request's too. */
interface ResultItem {
  readonly relative_url: string;
  readonly code: number;
  readonly headers: Record<string, string[]> | null;
  readonly body: string;
}

function isResultItem(x: unknown): x is ResultItem {
  if (x === null || typeof x !== "object" || Array.isArray(x)) return false;
  const r = x as Record<string, unknown>;
  const headers = r.headers;
  const headersOk =
    headers === null ||
    (typeof headers === "object" && !Array.isArray(headers) && Object.values(headers).every((v) => Array.isArray(v) && v.every((s) => typeof s === "string")));
  return typeof r.relative_url === "string" && Number.isInteger(r.code) && headersOk && typeof r.body === "string";
}

/**
 * Why a 2xx answer is not the gateway's list of results (undefined: it is): not a list, or an
 * item not of the gateway's shape — a proxy, or a host that is not the gateway, answered.
 */
function notResults(body: unknown): string | undefined {
  if (!Array.isArray(body)) return "not a list";
  const bad = body.findIndex((x) => !isResultItem(x));
  return bad < 0 ? undefined : `item ${bad + 1} is not {relative_url, code, headers, body}`;
}

/** The gateway's success answers of the batchable operations: what a 2xx sub-request must carry to count as applied. */
const successAnswers: { readonly [O in OperationName]?: (body: unknown) => boolean } = {
  patchApi: (b) => keyStatus(b),
  upsertOrgKey: (b) => keyStatus(b),
  updateOAuthClient: (b) => b !== null && typeof b === "object" && typeof (b as Record<string, unknown>).client_id === "string",
};

/** `{"key":"<id>","status":"ok","action":…}`. */
function keyStatus(b: unknown): boolean {
  if (b === null || typeof b !== "object") return false;
  const r = b as Record<string, unknown>;
  return typeof r.key === "string" && r.key !== "" && r.status === "ok";
}

/**
 * Whether a 2xx result carries the answer the gateway gives to this operation: anything else
 * did not come from the gateway's management interface, so nothing says the change was made.
 */
export function answeredAsGateway(operation: OperationName | undefined, body: unknown): boolean {
  const expected = operation === undefined ? undefined : successAnswers[operation];
  return expected === undefined || expected(body);
}

/** One sub-request's outcome from its result item (none: unknown). */
function subOutcome(r: ResultItem | undefined, operation: OperationName | undefined): CallOutcome {
  if (r === undefined) return { kind: "unknown", error: "no result for this sub-request in the batch answer (it failed below HTTP, or was lost)" };
  const text = r.body;
  let body: unknown = text;
  try {
    body = text === "" ? undefined : JSON.parse(text);
  } catch {
    // keep the text
  }
  if (r.code >= 200 && r.code < 300 && !answeredAsGateway(operation, body)) {
    return {
      kind: "unknown",
      error: `its batch result is ${r.code} without the gateway's answer to ${operation ?? "it"} (${text.slice(0, 60).trim() || "an empty body"}): outcome unknown`,
    };
  }
  const headers = r.headers ?? {};
  return { kind: "answered", status: r.code, retryAfterMs: parseRetryAfter(headers["Retry-After"]), body, text };
}
