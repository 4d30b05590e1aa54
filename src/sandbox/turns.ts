/**
 * Turns of the event loop for work that would otherwise run back to back: batch sub-requests
 * are processed in-process, their awaits resolving at once, so a batch of 50 API patches (each
 * document checked) ran as one synchronous stretch — and 32 batches arriving together held every
 * other call the sandbox was answering for seconds (measured: 9 s at 30,000 resources). Each
 * sub-request now waits for a turn: at most `perTurn` start per turn of the loop, and the loop
 * reads its sockets between turns. Sub-requests still overlap (a slow one does not hold the
 * next), as the gateway runs them side by side.
 */
export class Turns {
  private readonly waiting: Array<() => void> = [];
  private scheduled = false;

  constructor(private readonly perTurn = 4) {}

  /** Resolves on a coming turn of the event loop, in the order asked. */
  next(): Promise<void> {
    return new Promise<void>((resolve) => {
      this.waiting.push(resolve);
      if (!this.scheduled) {
        this.scheduled = true;
        setImmediate(() => this.turn());
      }
    });
  }

  private turn(): void {
    for (const wake of this.waiting.splice(0, this.perTurn)) wake();
    if (this.waiting.length > 0) setImmediate(() => this.turn());
    else this.scheduled = false;
  }
}
