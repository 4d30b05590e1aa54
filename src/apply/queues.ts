/**
 * One queue per interface: the configured concurrency and requests per second, and a pause
 * of the whole interface when it answers 429 with Retry-After. No call to a paused interface
 * starts before the pause ends.
 */
import { setTimeout as sleep } from "node:timers/promises";
import PQueue from "p-queue";
import type { RateLimitConfig } from "../config/config.js";
import type { InterfaceName } from "../kinds/kind.js";
import type { Logger } from "../logger.js";

/** p-queue settings for a rate: small intervals keep the flow even instead of bursty. */
export function rateWindow(rps: number): { interval: number; intervalCap: number } {
  if (rps >= 10) return { interval: 100, intervalCap: Math.max(1, Math.round(rps / 10)) };
  return { interval: Math.max(1, Math.round(1000 / rps)), intervalCap: 1 };
}

/** A queued call that was not sent because the apply was stopped. */
export class NotStarted extends Error {
  constructor() {
    super("not started: the apply was stopped");
  }
}

export class InterfaceQueue {
  private readonly queue: PQueue;
  private pausedUntil = 0;
  private resumeTimer: NodeJS.Timeout | undefined;
  /** HTTP requests started through this queue. */
  started = 0;
  pauses = 0;

  constructor(
    readonly name: InterfaceName,
    rate: RateLimitConfig,
    private readonly logger: Logger,
    /** A monotonic clock with sub-millisecond steps, so a pause never ends early by rounding. */
    private readonly now: () => number = () => performance.now(),
  ) {
    this.queue = new PQueue({ concurrency: rate.concurrency, ...rateWindow(rate.requestsPerSecond) });
  }

  /**
   * Runs `send` when the queue allows: never while the interface is paused, and not at all
   * once `signal` is aborted (throws NotStarted). `prepare` runs first, inside the queue slot
   * (an intent's state write); a pause that begins while it runs still holds the call back,
   * and a prepared call is in flight: it is sent even if `signal` aborts meanwhile.
   */
  async run<T>(send: () => Promise<T>, signal?: AbortSignal, prepare?: () => Promise<void>): Promise<T> {
    return this.queue.add(async () => {
      await this.resumed();
      if (signal?.aborted === true) throw new NotStarted();
      if (prepare !== undefined) {
        await prepare();
        await this.resumed();
      }
      this.started++;
      return send();
    });
  }

  /**
   * Resolves once no pause holds: p-queue stops starting tasks while paused, and this also
   * holds a task that was already starting when the pause began.
   */
  private async resumed(): Promise<void> {
    for (let wait = this.pausedUntil - this.now(); wait > 0; wait = this.pausedUntil - this.now()) await sleep(wait);
  }

  /** Stops the whole interface for `ms` (a 429 or 503 with Retry-After). */
  pause(ms: number): void {
    const until = this.now() + ms;
    if (until <= this.pausedUntil) return;
    this.pausedUntil = until;
    this.pauses++;
    this.logger.warn({ interface: this.name, pauseMs: ms }, "interface paused by Retry-After");
    this.queue.pause();
    if (this.resumeTimer !== undefined) clearTimeout(this.resumeTimer);
    this.resumeTimer = setTimeout(() => {
      this.resumeTimer = undefined;
      this.queue.start();
    }, ms);
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
