/**
 * A state read once and held in memory, read-only: the daemon's state fetched for a
 * merge-request plan, or the empty state of a configured SQLite file that does not exist (a
 * plan never creates one). Planning needs only `read`; anything that would write is refused.
 */
import { ErrorCode, StateError } from "../../errors.js";
import type { HistoryEntry } from "../history/history.js";
import type { StateBackend, StateLock, StateSnapshot, StateVersion } from "../state.js";

export class SnapshotState implements StateBackend {
  constructor(
    private readonly snapshot: StateSnapshot,
    readonly description: string,
  ) {}

  read(): Promise<StateSnapshot> {
    return Promise.resolve(this.snapshot);
  }

  /** Its records are whole: the heads are the snapshot, and every payload is read already. */
  readHeads(): Promise<StateSnapshot> {
    return this.read();
  }

  readPayloads(heads: StateSnapshot): Promise<StateSnapshot> {
    return Promise.resolve(heads);
  }

  readVersion(): Promise<StateVersion> {
    return Promise.resolve({ lineage: this.snapshot.lineage, serial: this.snapshot.serial });
  }

  private refuse(): Promise<never> {
    return Promise.reject(
      new StateError(ErrorCode.STATE_IO, `${this.description} is read-only here (a copy for planning)`, {
        hint: "apply with the daemon, or with the state itself",
      }),
    );
  }

  lock(): Promise<StateLock> {
    return this.refuse();
  }

  write(): Promise<void> {
    return this.refuse();
  }

  writeClaiming(): Promise<never> {
    return this.refuse();
  }

  remove(): Promise<void> {
    return this.refuse();
  }

  initialise(): Promise<void> {
    return this.refuse();
  }

  replaceAll(): Promise<void> {
    return this.refuse();
  }

  appendHistory(): Promise<never> {
    return this.refuse();
  }

  /** A copy for planning holds records, not the history. */
  readHistory(): Promise<HistoryEntry[]> {
    return Promise.resolve([]);
  }

  close(): Promise<void> {
    return Promise.resolve();
  }
}
