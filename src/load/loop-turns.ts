/**
 * Work done synchronously in batches, the event loop let go between them: a daemon listing or
 * hashing a huge repository still answers /healthz. Synchronous file-system calls cost less than
 * their asynchronous twins' thread-pool round trips (docs/dev/performance.md, "Push to applied");
 * this bounds how long they hold the loop.
 */
import { setImmediate as nextTurn } from "node:timers/promises";

export class LoopTurns {
  private done = 0;

  /** `perTurn`: items of work (files, directory entries) between two turns of the loop. */
  constructor(private readonly perTurn: number) {}

  /** One item done; the loop is let go after every `perTurn` of them. */
  async tick(): Promise<void> {
    if (++this.done % this.perTurn === 0) await nextTurn();
  }
}
