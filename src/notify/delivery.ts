/**
 * Delivery to one receiver: a bounded queue worked in order (a commit's `pending` reaches the
 * receiver before its result), each delivery tried up to `attempts` times with exponential
 * backoff and jitter (a 429/503's Retry-After honoured up to the backoff cap). Nothing here
 * ever throws to the caller or waits in the caller's path: a run only enqueues.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Dispatcher } from "undici";
import { request } from "undici";
import { linkedSignal } from "../abort-signals.js";
import type { Logger } from "../logger.js";
import type { DeliveryPolicy } from "../config/notifications.js";
import type { NotifyMetrics } from "./metrics.js";
import type { OutgoingRequest } from "./requests.js";

export interface DeliveryJob {
  /** `run-failed`, `commit-status:pending` …: for metrics and logs. */
  readonly event: string;
  readonly build: () => OutgoingRequest;
}

type TryOutcome = { readonly ok: true } | { readonly ok: false; readonly retry: boolean; readonly code: string; readonly waitMs?: number };

function retryAfterMs(value: string | string[] | undefined): number | undefined {
  const v = Array.isArray(value) ? value[0] : value;
  if (v === undefined) return undefined;
  const seconds = Number(v);
  if (Number.isFinite(seconds) && seconds >= 0) return seconds * 1000;
  const at = Date.parse(v);
  return Number.isNaN(at) ? undefined : Math.max(0, at - Date.now());
}

export class ReceiverQueue {
  private readonly jobs: DeliveryJob[] = [];
  private working: Promise<void> | undefined;
  private readonly stop = new AbortController();

  constructor(
    private readonly name: string,
    private readonly policy: DeliveryPolicy,
    private readonly deps: { readonly dispatcher: Dispatcher; readonly metrics: NotifyMetrics; readonly logger: Logger; readonly random?: () => number },
  ) {}

  enqueue(job: DeliveryJob): void {
    if (this.stop.signal.aborted) return;
    if (this.jobs.length >= this.policy.queueLimit) {
      const dropped = this.jobs.shift()!;
      this.deps.metrics.deliveries.inc({ receiver: this.name, event: dropped.event, outcome: "dropped" });
      this.deps.logger.warn({ receiver: this.name, event: dropped.event }, "notification dropped: the receiver's queue is full");
    }
    this.jobs.push(job);
    this.deps.metrics.queueDepth.set({ receiver: this.name }, this.jobs.length);
    this.working ??= this.work().finally(() => {
      this.working = undefined;
    });
  }

  /** Stops trying; waits up to `graceMs` for the delivery in progress. */
  async close(graceMs: number): Promise<void> {
    const working = this.working;
    if (working !== undefined) await Promise.race([working, sleep(graceMs, undefined, { ref: false })]);
    this.stop.abort();
    this.jobs.length = 0;
  }

  private async work(): Promise<void> {
    for (let job = this.jobs.shift(); job !== undefined; job = this.jobs.shift()) {
      this.deps.metrics.queueDepth.set({ receiver: this.name }, this.jobs.length);
      const outcome = await this.deliver(job).catch(() => "failed" as const);
      this.deps.metrics.deliveries.inc({ receiver: this.name, event: job.event, outcome });
    }
  }

  private async deliver(job: DeliveryJob): Promise<"delivered" | "failed"> {
    const { attempts, baseDelayMs, maxDelayMs } = this.policy;
    const random = this.deps.random ?? Math.random;
    for (let attempt = 1; attempt <= attempts && !this.stop.signal.aborted; attempt++) {
      const result = await this.tryOnce(job.build());
      this.deps.metrics.attempts.inc({ receiver: this.name, code: result.ok ? "2xx" : result.code });
      if (result.ok) return "delivered";
      if (!result.retry || attempt === attempts) {
        this.deps.logger.warn({ receiver: this.name, event: job.event, code: result.code, attempts: attempt }, "notification not delivered");
        return "failed";
      }
      const backoff = Math.min(maxDelayMs, baseDelayMs * 2 ** (attempt - 1)) * (0.5 + random() / 2);
      const wait = Math.min(maxDelayMs, Math.max(backoff, result.waitMs ?? 0));
      await sleep(wait, undefined, { signal: this.stop.signal, ref: false }).catch(() => undefined);
    }
    return "failed";
  }

  private async tryOnce(req: OutgoingRequest): Promise<TryOutcome> {
    // unlinked after the attempt: the notifier's own signal outlives every delivery
    const linked = linkedSignal([this.stop.signal, AbortSignal.timeout(this.policy.timeoutMs)]);
    const signal = linked.signal;
    try {
      const res = await request(req.url, {
        method: req.method,
        headers: req.headers,
        body: req.body,
        dispatcher: this.deps.dispatcher,
        signal,
        headersTimeout: this.policy.timeoutMs,
        bodyTimeout: this.policy.timeoutMs,
      });
      // the answer is not needed: read and dropped (bounded by the deadline)
      await res.body.dump({ limit: 64 * 1024, signal });
      const status = res.statusCode;
      if (status >= 200 && status < 300) return { ok: true };
      const retry = status === 408 || status === 429 || status >= 500;
      const waitMs = retryAfterMs(res.headers["retry-after"]);
      return { ok: false, retry, code: String(status), ...(waitMs === undefined ? {} : { waitMs }) };
    } catch {
      return { ok: false, retry: true, code: "error" };
    } finally {
      linked.unlink();
    }
  }
}
