/**
 * A state backend that passes every member to the backend it wraps: the base of the named wrappers
 * (the lease fence, the kept snapshot, the labelling of an apply's writes), each overriding only
 * what it changes. Written out member by member, not a Proxy: a member added to `StateBackend`
 * is a compile error here, once, instead of slipping past every wrapper unseen.
 */
import type { HistoryBound } from "../../config/history-section.js";
import type { HistoryDraft, HistoryEntry, HistoryQuery } from "../history/history.js";
import type { OwnershipRow } from "../ownership/ownership.js";
import type { ClaimedRecord } from "../state.js";
import type { ResourceRecord, StateBackend, StateLock, StateSnapshot, StateVersion } from "../state.js";

export class DelegatingState implements StateBackend {
  constructor(readonly backend: StateBackend) {}

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

  lock(owner: string): Promise<StateLock> {
    return this.backend.lock(owner);
  }

  write(record: ResourceRecord): Promise<void> {
    return this.backend.write(record);
  }

  writeClaiming(entries: readonly ClaimedRecord[], now: string): Promise<OwnershipRow[]> {
    return this.backend.writeClaiming(entries, now);
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
