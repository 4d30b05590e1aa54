/**
 * The pace of one interface's sends, kept the way a gateway enforcing `rate` requests per
 * second counts them: never more than `cap` = max(1, ⌊rate⌋) sends in any window of
 * cap/rate seconds (15/s: at most 15 in any second), and, while calls keep waiting, exactly
 * `rate` on average. (p-queue's "intervalCap per 100 ms interval" turned 15/s into 2 per
 * 100 ms — 20/s — and 14/s into 10/s.)
 *
 * Sends are spaced evenly (one every 1000/rate ms). Timers fire late, so a late send does
 * not push the schedule back: the next one is due one spacing after the previous one was
 * due, catching up a little lateness — and the window of recent send times bounds every
 * burst the catch-up allows.
 */

/**
 * How much lateness the schedule catches up: timers' millisecond steps and a busy event loop,
 * at most half a spacing (two sends are never closer than half a spacing, however late).
 */
const catchUpMs = 20;

/**
 * Added to the window: a request reaches the gateway a little after it starts here, some later
 * than others (a new connection, a busy event loop), and the gateway counts arrivals. Costs at
 * most 1 % of the rate when the window, not the spacing, holds sends back.
 */
const windowMarginMs = 10;

export class SendPacer {
  /** The last send times, a ring of the most a window can hold at the configured rate. */
  private readonly times: Float64Array;
  private sends = 0;
  /** When the next send is due by the even spacing. */
  private due = Number.NEGATIVE_INFINITY;

  constructor(
    maxRate: number,
    private readonly now: () => number,
  ) {
    this.times = new Float64Array(windowCap(maxRate)).fill(Number.NEGATIVE_INFINITY);
  }

  /** Milliseconds until a send at `rate` is allowed (0: now). */
  waitMs(rate: number): number {
    const cap = Math.min(windowCap(rate), this.times.length);
    const spacing = 1000 / rate;
    const oldestInWindow = this.sends >= cap ? this.times[(this.sends - cap) % this.times.length]! : Number.NEGATIVE_INFINITY;
    return Math.max(0, this.due - this.now(), oldestInWindow + cap * spacing + windowMarginMs - this.now());
  }

  /** Reserves a send now: call it when `waitMs` said 0, in the same turn. Returns the send's number. */
  take(rate: number): number {
    const t = this.now();
    const spacing = 1000 / rate;
    this.due = Math.max(this.due, t - Math.min(spacing / 2, catchUpMs)) + spacing;
    this.times[this.sends % this.times.length] = t;
    return this.sends++;
  }

  /**
   * The send reserved as `send` really starts now: a start delayed after its reservation (a
   * collection, a busy turn) counts from when it starts, so the sends after it keep the window.
   */
  started(send: number): void {
    if (send <= this.sends - this.times.length) return;
    const slot = send % this.times.length;
    this.times[slot] = Math.max(this.times[slot]!, this.now());
  }
}

/** The sends a window may hold at `rate`: the window is cap/rate seconds long. */
function windowCap(rate: number): number {
  return Math.max(1, Math.floor(rate));
}
