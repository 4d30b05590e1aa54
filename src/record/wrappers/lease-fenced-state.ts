/**
 * The fleet's side of the state lock: a state backend whose lock's fence also asks the
 * environment's lease, so a run that lost its lease sends and writes nothing more. The lock is
 * taken only while the lease is held, and the lock's `check` (which a run calls before every
 * call and every write, as it does for the lock's own fence) throws once the lease is gone.
 * Each member delegates explicitly: a member added to `StateBackend` must be written here too
 * (the compiler says so), rather than passing through unfenced.
 */
import type { HistoryBound } from "../../config/history-section.js";
import type { HistoryDraft, HistoryEntry, HistoryQuery } from "../history/history.js";
import type { ResourceRecord, StateBackend, StateLock, StateSnapshot, StateVersion } from "../state.js";

/** The lease of one environment, as the fence sees it: `check` throws once this replica no longer holds it. */
export interface LeaseFence {
  readonly environment: string;
  check(): void;
}

/** A backend whose lock is fenced by a lease as well as by itself; every other member delegates as it is. */
export class LeaseFencedState implements StateBackend {
  constructor(
    readonly backend: StateBackend,
    readonly lease: LeaseFence,
  ) {}

  get description(): string {
    return this.backend.description;
  }

  read(): Promise<StateSnapshot> {
    return this.backend.read();
  }

  readHeads(): Promise<StateSnapshot> {
    return this.backend.readHeads();
  }

  readPayloads(heads: StateSnapshot, ids: ReadonlySet<string>): Promise<StateSnapshot> {
    return this.backend.readPayloads(heads, ids);
  }

  readVersion(): Promise<StateVersion> {
    return this.backend.readVersion();
  }

  async lock(owner: string): Promise<StateLock> {
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

  write(record: ResourceRecord): Promise<void> {
    return this.backend.write(record);
  }

  remove(id: string): Promise<void> {
    return this.backend.remove(id);
  }

  initialise(hashKey: string | undefined): Promise<void> {
    return this.backend.initialise(hashKey);
  }

  replaceAll(snapshot: StateSnapshot): Promise<void> {
    return this.backend.replaceAll(snapshot);
  }

  appendHistory(draft: HistoryDraft, bound: HistoryBound): Promise<HistoryEntry> {
    return this.backend.appendHistory(draft, bound);
  }

  readHistory(query: HistoryQuery): Promise<HistoryEntry[]> {
    return this.backend.readHistory(query);
  }

  close(): Promise<void> {
    return this.backend.close();
  }
}
