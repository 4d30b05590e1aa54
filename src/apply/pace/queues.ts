/**
 * One queue per interface: the configured concurrency and requests per second, a pause of the
 * whole interface when it answers 429 (or 503) with Retry-After, and an adaptive rate: a 429
 * without Retry-After halves the interface's rate, which then grows back a tenth of the
 * configured rate per answered call (AIMD). No call to a paused interface starts before the
 * pause ends. A pause longer than the cap closes the interface for the rest of the apply:
 * every call not yet started on it fails as throttled (it was not sent). Stopping the apply
 * cuts every wait short.
 *
 * The rate is kept by a pacer (even spacing, never more than the rate in any window), not by
 * p-queue's interval, which can only count whole calls per interval. A pause keeps the process
 * alive: the calls it holds are work still to do (an unreferenced resume timer let a one-shot
 * apply exit mid-way with Node's code 13).
 */
import { setTimeout as sleep } from "node:timers/promises";
import PQueue from "p-queue";
import { AbortWaiters, linkedSignal } from "../../abort-signals.js";
import type { RateLimitConfig } from "../../config/config-sections.js";
import type { InterfaceName } from "../../contract/interfaces.js";
import type { Logger } from "../../logger.js";
import { SendPacer } from "./send-pacer.js";

/** A queued call that was not sent because the apply was stopped. */
export class NotStarted extends Error {
  constructor() {
    super("not started: the apply was stopped");
  }
}

/** A queued call that was not sent because its interface asked for a pause longer than the cap. */
export class Throttled extends Error {}

/** The lowest adaptive rate, in requests per second. */
const minRate = 0.2;

export interface QueueOptions {
  /** A longer Retry-After closes the interface for the rest of the apply. */
  readonly maxPauseMs?: number;
  /** A monotonic clock with sub-millisecond steps, so a pause never ends early by rounding. */
  readonly now?: () => number;
  /** The target's pace, shared with the other applies sending to it (target-pacers.ts); default this queue's own. */
  readonly pacer?: SendPacer;
}

export class InterfaceQueue {
  private readonly queue: PQueue;
  private readonly now: () => number;
  private pausedUntil = 0;
  private resumeTimer: NodeJS.Timeout | undefined;
  /** Wakes every waiting call when the interface closes. */
  private readonly wake = new AbortController();
  /** Calls waiting in the queue, each left when the apply stops or the interface closes. */
  private readonly waiting = new AbortWaiters();
  private closed: string | undefined;
  private readonly pacer: SendPacer;
  /**
   * Checked just before each call leaves, in the same turn as the send: throws when this
   * process may no longer send (it lost the state lock). The call is then not sent.
   */
  fence: (() => void) | undefined;
  /** HTTP requests started through this queue. */
  started = 0;
  pauses = 0;
  /** The adaptive rate, requests per second. */
  rate: number;

  constructor(
    readonly name: InterfaceName,
    private readonly limit: RateLimitConfig,
    private readonly logger: Logger,
    private readonly options: QueueOptions = {},
  ) {
    this.queue = new PQueue({ concurrency: limit.concurrency });
    this.now = options.now ?? (() => performance.now());
    this.pacer = options.pacer ?? new SendPacer(limit.requestsPerSecond, this.now);
    this.rate = limit.requestsPerSecond;
  }

  /**
   * Runs `send` when the queue allows: never while the interface is paused, and not at all
   * once `signal` is aborted (NotStarted) or the interface closed (Throttled). `prepare` runs
   * first, inside the queue slot (an intent's state write); a pause that begins while it runs
   * still holds the call back. A prepared call is sent even if `signal` aborts meanwhile —
   * unless it would have to wait out a pause first: then it is not sent (NotStarted).
   */
  async run<T>(send: () => Promise<T>, signal?: AbortSignal, prepare?: () => Promise<void>): Promise<T> {
    // A call still waiting in the queue (held there by a pause) leaves it when the apply stops
    // or the interface closes; once it has started, only its own waits are cut short.
    const queued = new AbortController();
    const leave = (): void => queued.abort(this.closed !== undefined ? new Throttled(this.closed) : new NotStarted());
    const unlink = this.waiting.add([this.wake.signal, ...(signal === undefined ? [] : [signal])], leave);
    try {
      return await this.queue.add(
        async () => {
          unlink();
          if (signal?.aborted === true) throw new NotStarted();
          if (prepare !== undefined) {
            await this.resumed(signal, false);
            await prepare();
          }
          const reserved = await this.resumed(signal, true);
          this.fence?.();
          if (reserved !== undefined) this.pacer.started(reserved);
          this.started++;
          return send();
        },
        { signal: queued.signal },
      );
    } finally {
      unlink();
    }
  }

  /**
   * Resolves once no pause holds and the rate allows a start; `take`: the start is made now
   * (it counts against the rate).
   */
  private async resumed(signal: AbortSignal | undefined, take: boolean): Promise<number | undefined> {
    const waking = linkedSignal([this.wake.signal, ...(signal === undefined ? [] : [signal])]);
    try {
      for (;;) {
        if (this.closed !== undefined) throw new Throttled(this.closed);
        const wait = Math.max(this.pausedUntil - this.now(), this.pacer.waitMs(this.rate));
        if (wait <= 0) break;
        if (signal?.aborted === true) throw new NotStarted();
        await sleep(wait, undefined, { signal: waking.signal }).catch(() => undefined);
      }
    } finally {
      waking.unlink();
    }
    return take ? this.pacer.take(this.rate) : undefined;
  }

  /**
   * Stops the whole interface for `ms` (a 429 or 503 with Retry-After). Beyond the cap the
   * interface closes instead; returns false then.
   */
  pause(ms: number): boolean {
    if (this.options.maxPauseMs !== undefined && ms > this.options.maxPauseMs) {
      this.close(
        `the ${this.name} interface asked to wait ${Math.ceil(ms / 1000)} s (Retry-After), longer than retries.maxRetryAfterMs (${Math.ceil(this.options.maxPauseMs / 1000)} s): not sent; the next run tries again`,
      );
      return false;
    }
    const until = this.now() + ms;
    if (until <= this.pausedUntil) return true;
    this.pausedUntil = until;
    this.pauses++;
    this.logger.warn({ interface: this.name, pauseMs: ms }, "interface paused by Retry-After");
    this.queue.pause();
    if (this.resumeTimer !== undefined) clearTimeout(this.resumeTimer);
    this.resumeTimer = setTimeout(() => {
      this.resumeTimer = undefined;
      this.queue.start();
    }, ms);
    return true;
  }

  /** Fails every call not yet started, for the rest of the apply. */
  close(why: string): void {
    if (this.closed !== undefined) return;
    this.closed = why;
    this.logger.error({ interface: this.name, reason: why }, "interface closed for this run");
    this.wake.abort();
    if (this.resumeTimer !== undefined) clearTimeout(this.resumeTimer);
    this.queue.start();
  }

  /** The reason the interface closed, if it did. */
  get closedBecause(): string | undefined {
    return this.closed;
  }

  /** A 429 without Retry-After: halve the rate (multiplicative decrease). */
  slowDown(): void {
    const before = this.rate;
    this.rate = Math.max(Math.min(minRate, this.limit.requestsPerSecond), this.rate / 2);
    if (this.rate < before)
      this.logger.warn({ interface: this.name, rate: Number(this.rate.toFixed(2)) }, "interface rate halved after a 429 without Retry-After");
  }

  /** An answered call: grow the rate back by a tenth of the configured one (additive increase). */
  speedUp(): void {
    this.rate = Math.min(this.limit.requestsPerSecond, this.rate + this.limit.requestsPerSecond / 10);
  }

  /** Calls this interface runs at once. */
  get concurrency(): number {
    return this.limit.concurrency;
  }

  get depth(): number {
    return this.queue.size + this.queue.pending;
  }

  async idle(): Promise<void> {
    await this.queue.onIdle();
  }

  stop(): void {
    if (this.resumeTimer !== undefined) clearTimeout(this.resumeTimer);
    this.queue.clear();
  }
}
