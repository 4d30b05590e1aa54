/**
 * The fleet's side of the state lock: a state backend whose lock's fence also asks the
 * environment's lease, so a run that lost its lease sends and writes nothing more. The lock is
 * taken only while the lease is held, and the lock's `check` (which a run calls before every
 * call and every write, as it does for the lock's own fence) throws once the lease is gone.
 * Every other member passes through (delegating-state.ts): a write goes through the lock, whose
 * `check` the run calls before it.
 */
import type { StateBackend, StateLock } from "../state.js";
import { DelegatingState } from "./delegating-state.js";

/** The lease of one environment, as the fence sees it: `check` throws once this replica no longer holds it. */
export interface LeaseFence {
  readonly environment: string;
  check(): void;
}

/** A backend whose lock is fenced by a lease as well as by itself; every other member delegates as it is. */
export class LeaseFencedState extends DelegatingState {
  constructor(
    backend: StateBackend,
    readonly lease: LeaseFence,
  ) {
    super(backend);
  }

  override async lock(owner: string): Promise<StateLock> {
    this.lease.check();
    const held = await this.backend.lock(`${owner} for environment ${this.lease.environment}`);
    return {
      release: () => held.release(),
      check: () => {
        this.lease.check();
        held.check();
      },
    };
  }
}
