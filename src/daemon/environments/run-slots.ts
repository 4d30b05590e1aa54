/**
 * The places among the environments' runs (`limits.concurrentEnvironments`): at most `bound`
 * runs at once, the rest waiting in the order asked — except an environment this replica has
 * just taken over (a lease gained: its leader died, was paused or cut off), whose next run goes
 * before every run waiting. A takeover is what a failed leader left undone; behind a backlog of
 * the survivor's own runs (a commit for every environment arrives as the leader dies) it waited
 * for all of them, beyond the lease time plus a renewal. The bound itself stays: a takeover
 * waits for a place to end, it never runs beside `bound` others.
 *
 * A standby's turn (an environment another replica leads) takes no place: it sends nothing and
 * ends at once, so it never holds a run of this replica back.
 */
interface Waiting {
  readonly environment: string;
  readonly go: () => void;
}

export class RunSlots {
  private running = 0;
  private readonly waiting: Waiting[] = [];
  /** Environments taken over whose first run since has not started. */
  private readonly taken = new Set<string>();

  constructor(readonly bound: number) {}

  /** `environment`'s lease was just gained: its next run goes first. */
  tookOver(environment: string): void {
    this.taken.add(environment);
  }

  /** Runs `work` for `environment` in its place; `standby`: a turn that sends nothing, run at once. */
  async run<T>(environment: string, work: () => Promise<T>, standby = false): Promise<T> {
    if (standby) return work();
    // a run that ends hands its place to the next waiting, so `running` counts it already
    if (this.running >= this.bound) await new Promise<void>((go) => this.waiting.push({ environment, go }));
    else this.running++;
    this.taken.delete(environment);
    try {
      return await work();
    } finally {
      const next = this.next();
      if (next === undefined) this.running--;
      else next.go();
    }
  }

  /** The first waiting run of an environment taken over, else the first waiting. */
  private next(): Waiting | undefined {
    // scanned only while a takeover waits: a backlog of N runs costs N hand-overs, not N²
    const first = this.taken.size === 0 ? -1 : this.waiting.findIndex((w) => this.taken.has(w.environment));
    return this.waiting.splice(first === -1 ? 0 : first, 1)[0];
  }

  /** Runs waiting for a place (tests). */
  get queued(): number {
    return this.waiting.length;
  }
}
