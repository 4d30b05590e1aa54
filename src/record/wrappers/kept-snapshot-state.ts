/**
 * A daemon's environment reads its whole state before each run (a forced re-plan of an unchanged
 * revision included), ~25 ms of its main thread for 1,000 records: the rows, the records made of
 * them and the redaction of their heads. When nothing was written since the last such read, the
 * records are the same: this wrapper keeps the last snapshot read in full and serves it again
 * while the state's version — its lineage and serial, one cheap query — is the one that snapshot
 * was read at. Every write bumps the serial in the same transaction (sqlite-backend.ts,
 * postgres-backend.ts), whoever writes: this process, a `gatesync apply` from a laptop, another
 * replica; a new state (a deleted file, another schema) has another lineage. So a kept snapshot
 * is never one the stored state no longer is — the same identity run-basis.ts relies on to skip
 * a run.
 *
 * Records are immutable values (every change makes a new record, a snapshot's map is read-only),
 * and a payload held as text is parsed afresh on each `read()` (lazy-record.ts), so one snapshot
 * may serve many runs. A read of the heads and then of chosen payloads (readHeads, readPayloads)
 * is not served from here: its reader must see the records without theirs. The heads were scrubbed with
 * the secrets known when they were read: a secret registered since makes the next read a full one.
 */
import { redactor } from "../../secrets/redaction.js";
import type { OwnershipRow } from "../ownership/ownership.js";
import type { ClaimedRecord } from "../state.js";
import type { ResourceRecord, StateBackend, StateSnapshot } from "../state.js";
import { DelegatingState } from "./delegating-state.js";

interface Kept {
  readonly snapshot: StateSnapshot;
  /** How many secret values the redaction layer knew when it was read. */
  readonly secretsKnown: number;
}

export class KeptSnapshotState extends DelegatingState {
  private kept: Kept | undefined;
  /** How many reads were served from the kept snapshot (its tests read it). */
  servedKept = 0;

  override async read(): Promise<StateSnapshot> {
    const kept = this.kept;
    if (kept !== undefined && kept.secretsKnown === redactor.size) {
      // a version that cannot be read is no match: the full read meets the error and reports it
      const now = await this.backend.readVersion().catch(() => undefined);
      if (now !== undefined && now.lineage === kept.snapshot.lineage && now.serial === kept.snapshot.serial && this.kept === kept) {
        this.servedKept++;
        return kept.snapshot;
      }
    }
    const secretsKnown = redactor.size;
    const snapshot = await this.backend.read();
    // a never-written state (serial 0) is not kept: it is cheap to read, and a new file may replace it
    this.kept = snapshot.serial > 0 ? { snapshot, secretsKnown } : undefined;
    return snapshot;
  }

  override write(record: ResourceRecord): Promise<void> {
    // the serial moves on: the kept snapshot would not be served again, and need not be held meanwhile
    this.kept = undefined;
    return this.backend.write(record);
  }

  override writeClaiming(entries: readonly ClaimedRecord[], now: string): Promise<OwnershipRow[]> {
    this.kept = undefined;
    return this.backend.writeClaiming(entries, now);
  }

  override remove(id: string): Promise<void> {
    this.kept = undefined;
    return this.backend.remove(id);
  }

  override initialise(hashKey: string | undefined): Promise<void> {
    this.kept = undefined;
    return this.backend.initialise(hashKey);
  }

  override replaceAll(snapshot: StateSnapshot): Promise<void> {
    this.kept = undefined;
    return this.backend.replaceAll(snapshot);
  }

  override close(): Promise<void> {
    this.kept = undefined;
    return this.backend.close();
  }
}

/** The backend, its last full snapshot served again while the stored state's version is unchanged. */
export function keptSnapshotState(backend: StateBackend): KeptSnapshotState {
  return new KeptSnapshotState(backend);
}
