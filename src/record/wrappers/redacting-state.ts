/**
 * The state's side of the redaction layer (secrets/redaction.ts): a state backend that scrubs
 * every record (and every snapshot of a migration) before the backend it wraps sees it, and
 * every record it reads back — a payload held as text (lazy-record.ts) on each `read()`.
 * It sits where records meet storage, so it wraps whichever backend the config opens. Each
 * member delegates explicitly: a member added to `StateBackend` must be written here too (the
 * compiler says so), rather than passing through unscrubbed. Documents held by reference are
 * read into the record before it is scrubbed.
 */
import { materialize } from "../../kinds/document-ref.js";
import { redactor, scrubDeep } from "../../secrets/redaction.js";
import { mapLazyRecord, withReadPayloads } from "./lazy-record.js";
import type { HistoryBound } from "../../config/history-section.js";
import type { HistoryDraft, HistoryEntry, HistoryQuery } from "../history/history.js";
import type { OwnershipRow } from "../ownership/ownership.js";
import type { ClaimedRecord } from "../state.js";
import type { ResourceRecord, StateBackend, StateLock, StateSnapshot, StateVersion } from "../state.js";
import { movedSince } from "../state.js";

/** The snapshot with every record scrubbed, payloads held as text included (when they are read). */
function scrubbedSnapshot(snapshot: StateSnapshot, only?: ReadonlySet<string>): StateSnapshot {
  if (redactor.size === 0) return snapshot;
  const scrubbed = (id: string, r: ResourceRecord): ResourceRecord => (only === undefined || only.has(id) ? mapLazyRecord(r, scrubDeep, scrubDeep) : r);
  return { ...snapshot, resources: new Map([...snapshot.resources].map(([id, r]) => [id, scrubbed(id, r)])) };
}

/**
 * A record as it may be stored: its payloads read (a walk must see values, not their holders),
 * documents held by reference read in (so that they are scrubbed too), then scrubbed.
 */
const storable = (record: ResourceRecord): ResourceRecord => withReadPayloads(record, storableValue, storableValue);
const storableValue = <T>(value: T): T => scrubDeep(materialize(value));

/** A backend whose records are scrubbed on their way in and out; every other member delegates as it is. */
export class RedactingState implements StateBackend {
  constructor(readonly backend: StateBackend) {}

  get description(): string {
    return this.backend.description;
  }

  async read(): Promise<StateSnapshot> {
    return scrubbedSnapshot(await this.backend.read());
  }

  async readHeads(): Promise<StateSnapshot> {
    return scrubbedSnapshot(await this.backend.readHeads());
  }

  /** The heads were scrubbed when read: only the records read again are scrubbed now (all of them, when the state was read afresh). */
  async readPayloads(heads: StateSnapshot, ids: ReadonlySet<string>): Promise<StateSnapshot> {
    const read = await this.backend.readPayloads(heads, ids);
    return movedSince(heads, read) ? scrubbedSnapshot(read) : scrubbedSnapshot(read, ids);
  }

  readVersion(): Promise<StateVersion> {
    return this.backend.readVersion();
  }

  lock(owner: string): Promise<StateLock> {
    return this.backend.lock(owner);
  }

  write(record: ResourceRecord): Promise<void> {
    return this.backend.write(storable(record));
  }

  writeClaiming(entries: readonly ClaimedRecord[], now: string): Promise<OwnershipRow[]> {
    return this.backend.writeClaiming(
      entries.map((e) => ({ ...e, record: storable(e.record) })),
      now,
    );
  }

  remove(id: string): Promise<void> {
    return this.backend.remove(id);
  }

  initialise(hashKey: string | undefined): Promise<void> {
    return this.backend.initialise(hashKey);
  }

  replaceAll(snapshot: StateSnapshot): Promise<void> {
    return this.backend.replaceAll({ ...snapshot, resources: new Map([...snapshot.resources].map(([id, r]) => [id, storable(r)])) });
  }

  appendHistory(draft: HistoryDraft, bound: HistoryBound): Promise<HistoryEntry> {
    // a row holds error texts and diagnostics: scrubbed like a record
    return this.backend.appendHistory(scrubDeep(draft), bound).then(scrubDeep);
  }

  async readHistory(query: HistoryQuery): Promise<HistoryEntry[]> {
    return scrubDeep(await this.backend.readHistory(query));
  }

  close(): Promise<void> {
    return this.backend.close();
  }
}

/** The backend, with records scrubbed on their way in and out. */
export function redactingState(backend: StateBackend): StateBackend {
  return new RedactingState(backend);
}
