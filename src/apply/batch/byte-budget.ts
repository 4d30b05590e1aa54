/**
 * A bound on the bytes that work in flight holds at once: a batch's sub-request bodies from the
 * moment it is packed until its answer is settled. Takers wait, first come first served, until
 * their bytes fit; a taker larger than the whole budget goes once nothing else is held, so
 * nothing waits forever.
 */
export class ByteBudget {
  #held = 0;
  readonly #waiting: Array<{ readonly bytes: number; readonly go: () => void }> = [];

  constructor(readonly limit: number) {}

  /** Bytes taken and not given back. */
  get held(): number {
    return this.#held;
  }

  /** Resolves once `bytes` are taken. */
  async take(bytes: number): Promise<void> {
    if (this.#waiting.length === 0 && this.#fits(bytes)) {
      this.#held += bytes;
      return;
    }
    await new Promise<void>((go) => this.#waiting.push({ bytes, go }));
  }

  /** Gives `bytes` back; waiters that now fit go, in order. */
  give(bytes: number): void {
    this.#held -= bytes;
    while (this.#waiting.length > 0 && this.#fits(this.#waiting[0]!.bytes)) {
      const next = this.#waiting.shift()!;
      this.#held += next.bytes;
      next.go();
    }
  }

  #fits(bytes: number): boolean {
    return this.#held === 0 || this.#held + bytes <= this.limit;
  }
}
