/**
 * Who may take one of a pool's connections now: at most `size` at once, first come first served
 * among those that may go, with two limits that keep one user from starving the others.
 *
 * - A user (an environment's state) holds at most `share` connections for its reads at once: one
 *   busy environment (a page refreshing, a long history read) never holds every connection.
 * - The state locks (a connection held for a whole apply) hold at most `size - 1`: a read always
 *   finds a connection in the end, so a run holding its lock and waiting to read never waits on
 *   runs that do the same (a reading connection is held for one transaction, never while waiting).
 *
 * A waiter that cannot go yet does not block those behind it that can (FIFO among the eligible).
 * A wait past its deadline is refused (`onTimeout`), never left to hang.
 *
 * Hand-written rather than pg.Pool's own queue: pg-pool's waiting list is FIFO (a pending queue,
 * push and shift) but knows neither users nor locks, and its one connectionTimeoutMillis cannot
 * tell which environment was waiting for what.
 */
export type GateKind = "read" | "lock";

interface Waiter {
  readonly user: string;
  readonly kind: GateKind;
  readonly grant: () => void;
  readonly timer: NodeJS.Timeout;
}

export interface GateCounts {
  readonly inUse: number;
  readonly locks: number;
  readonly waiting: number;
}

export class FairGate {
  private readonly waiters: Waiter[] = [];
  private readonly reads = new Map<string, number>();
  private inUse = 0;
  private locks = 0;

  constructor(
    readonly size: number,
    readonly share: number = Math.max(1, Math.ceil(size / 2)),
  ) {
    if (!Number.isInteger(size) || size < 2) throw new RangeError(`a pool of ${size} connections: at least 2`);
  }

  /** The locks at most held at once: one connection is always left for reads. */
  get lockCap(): number {
    return this.size - 1;
  }

  counts(): GateCounts {
    return { inUse: this.inUse, locks: this.locks, waiting: this.waiters.length };
  }

  /**
   * Waits for a place (at most `waitMs`); resolves with its release (call it once). Rejects with
   * `onTimeout()`'s error when the deadline passes first.
   */
  enter(user: string, kind: GateKind, waitMs: number, onTimeout: (counts: GateCounts) => Error): Promise<() => void> {
    return new Promise((resolve, reject) => {
      const grant = (): void => {
        clearTimeout(timer);
        this.take(user, kind);
        resolve(this.leaver(user, kind));
      };
      const timer = setTimeout(() => {
        const i = this.waiters.indexOf(waiter);
        if (i < 0) return;
        this.waiters.splice(i, 1);
        reject(onTimeout(this.counts()));
      }, waitMs);
      timer.unref?.();
      const waiter: Waiter = { user, kind, grant, timer };
      this.waiters.push(waiter);
      this.pump();
    });
  }

  private allowed(user: string, kind: GateKind): boolean {
    if (this.inUse >= this.size) return false;
    return kind === "lock" ? this.locks < this.lockCap : (this.reads.get(user) ?? 0) < this.share;
  }

  private take(user: string, kind: GateKind): void {
    this.inUse++;
    if (kind === "lock") this.locks++;
    else this.reads.set(user, (this.reads.get(user) ?? 0) + 1);
  }

  private leaver(user: string, kind: GateKind): () => void {
    let left = false;
    return () => {
      if (left) return;
      left = true;
      this.inUse--;
      if (kind === "lock") this.locks--;
      else {
        const n = (this.reads.get(user) ?? 1) - 1;
        if (n === 0) this.reads.delete(user);
        else this.reads.set(user, n);
      }
      this.pump();
    };
  }

  /** Grants, in arrival order, every waiter that may go now. */
  private pump(): void {
    for (let i = 0; i < this.waiters.length && this.inUse < this.size;) {
      const w = this.waiters[i]!;
      if (!this.allowed(w.user, w.kind)) {
        i++;
        continue;
      }
      this.waiters.splice(i, 1);
      w.grant();
    }
  }
}
