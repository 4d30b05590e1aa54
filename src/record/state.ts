/**
 * The state: what gatesync last applied and what the servers answered. The interfaces have
 * no read operations, so this is "the live state" the plan is computed against, as in
 * Terraform. No secret value is ever held here: sensitive values are keyed hashes.
 */
import type { Deferred } from "../deferred.js";
import { ErrorCode, StateError } from "../errors.js";
import type { HistoryStore } from "./history/history.js";
import type { OwnershipClaim, OwnershipRow } from "./ownership/ownership.js";
import { renamesProblem } from "./lineage/rename-step.js";
import type { RenameStep } from "./lineage/rename-step.js";

export const stateFormatVersion = 1;

/** A state of a format this gatesync cannot read (written by a newer one) refused: STATE_VERSION, `the state` or `what` named. */
export function checkStateFormat(format: number, what = "the state"): void {
  if (format > stateFormatVersion)
    throw new StateError(ErrorCode.STATE_VERSION, `${what} has format ${format}; this gatesync reads format ${stateFormatVersion}`, {
      hint: "use the newer gatesync that wrote it",
    });
}

/** A payload field of a record: produced by `read()` (lazy-record.ts holds them as stored), serialised as its value. */
export interface RecordPayload<T> extends Deferred<T> {
  toJSON(): unknown;
}

export type ResourceStatus = "applied" | "failed" | "in-doubt";

export interface ResourceRecord {
  /** `Kind/name`. */
  readonly id: string;
  readonly kind: string;
  readonly name: string;
  /** Path parameters of the object, server-assigned ids included. */
  readonly address: Readonly<Record<string, string>>;
  /** Server-assigned id (product, portal webhook, LLM settings). */
  readonly serverId?: string;
  /** The request's comparable form as last applied successfully (sensitive values hashed). */
  readonly applied?: RecordPayload<Readonly<Record<string, unknown>>>;
  /** Hash of `applied`. */
  readonly appliedHash?: string;
  /** OrgKey: the quota-reset trigger last sent. */
  readonly trigger?: string;
  /** The last server answer, redacted. */
  readonly response?: RecordPayload<unknown>;
  /** The commit the applied spec came from. */
  readonly commit?: string;
  readonly status: ResourceStatus;
  /** Why the last attempt failed, or why the outcome is unknown. */
  readonly error?: string;
  /** Why the record says what it does when the answer alone does not (a create settled by a duplicate refusal). */
  readonly note?: string;
  /** For in-doubt creates: what was sent (redacted). */
  readonly attempted?: RecordPayload<Readonly<Record<string, unknown>>>;
  /** For orphans deactivated under `orphans: deactivate`: when. */
  readonly deactivatedAt?: string;
  /** Health from the last post-apply checks. */
  /** The post-apply checks' verdict; `reason`: why they failed (apply/health-text.ts), bounded and scrubbed. */
  readonly health?: RecordPayload<{ readonly ok: boolean; readonly checkedAt: string; readonly results: readonly unknown[]; readonly reason?: string }>;
  /**
   * The resource's labels when the record was last written: a selection judges an orphan by
   * them. Absent on records written before labels were recorded (no label selector matches those).
   */
  readonly labels?: Readonly<Record<string, string>>;
  /** Adopted: the object existed before gatesync managed it; `verified` once an update by its id succeeded. */
  readonly adopted?: { readonly at: string; readonly source: "repository" | "command"; readonly verified: boolean };
  /**
   * The moves of this record from name to name, oldest first (rename-lineage.ts): an earlier name
   * declared again comes back to this record's object. Absent on records never renamed.
   */
  readonly renames?: readonly RenameStep[];
  readonly createdAt: string;
  readonly updatedAt: string;
}

/** A claim of the ownership registry and the record written with it, in one transaction (StateBackend.writeClaiming). */
export interface ClaimedRecord {
  readonly claim: OwnershipClaim;
  /** The record of the claimed object: its record as it stands (written again), or its first record. */
  readonly record: ResourceRecord;
}

export interface StateSnapshot {
  /** Identifies one state across its versions. */
  readonly lineage: string;
  /** Grows with every write: a saved plan records the serial it was computed from. */
  readonly serial: number;
  /** Key of the keyed hashes, when the state holds it (see GATESYNC_HASH_KEY). */
  readonly hashKey: string | undefined;
  readonly resources: ReadonlyMap<string, ResourceRecord>;
}

/** Which state, and how far it was written: what tells that another process wrote to it. */
export interface StateVersion {
  readonly lineage: string;
  readonly serial: number;
}

/** Held while applying; other writers wait or fail. */
export interface StateLock {
  release(): Promise<void>;
  /**
   * The fence: throws STATE_LOCK_LOST unless this process still holds the lock. Checked before
   * every call an apply sends, not only before state writes — a holder paused past the lock's
   * stale time (a frozen VM, a suspended CI runner) that wakes up after another apply took the
   * lock must not send its older changes over the newer ones. Synchronous, and cheap.
   */
  check(): void;
}

/** A state store. Writes are per resource, durable when the promise resolves. The environment's history lives beside the records (history.ts). */
export interface StateBackend extends HistoryStore {
  /** Everything, as of now, every payload read (and parsed when first accessed). Needs no lock. */
  read(): Promise<StateSnapshot>;
  /**
   * The records without their payloads (`applied`, `attempted`, `response`, `health`; see
   * lazy-record.ts): each is known to be there, none is read, and reading one is an
   * InternalError. What a reader that chooses whose payloads it needs reads first. Needs no lock.
   */
  readHeads(): Promise<StateSnapshot>;
  /**
   * `heads` (readHeads' answer) with the payloads of the records `ids` names, read in one
   * transaction that finds the state still at the heads' version. A state written since is read
   * again in full, every payload read: the answer's lineage or serial then differs from the heads'.
   */
  readPayloads(heads: StateSnapshot, ids: ReadonlySet<string>): Promise<StateSnapshot>;
  /** The lineage and serial alone, no record read (cheap: the daemon asks before each run). Needs no lock. */
  readVersion(): Promise<StateVersion>;
  /**
   * Takes the lock, or throws StateError(STATE_LOCKED) naming the holder. `owner` names the
   * program (`gatesync apply`, `gatesync run (daemon)`); the backend adds its pid and host.
   */
  lock(owner: string): Promise<StateLock>;
  /** Writes one record (under the lock), durably. */
  write(record: ResourceRecord): Promise<void>;
  /**
   * Claims the objects of `entries` in the ownership registry beside this state (open-ownership.ts)
   * and writes the record of each claim won, in ONE transaction (under the lock): a claim that
   * another claimant holds writes no record, and a failure writes neither. Answers the registry's
   * rows of every claimed object after it.
   */
  writeClaiming(entries: readonly ClaimedRecord[], now: string): Promise<OwnershipRow[]>;
  /** Removes one record (under the lock), durably. */
  remove(id: string): Promise<void>;
  /** Gives a new state its lineage, and the hash key unless GATESYNC_HASH_KEY holds it (under the lock). */
  initialise(hashKey: string | undefined): Promise<void>;
  /** Replaces everything with `snapshot` exactly, serial and lineage included (migration; under the lock). */
  replaceAll(snapshot: StateSnapshot): Promise<void>;
  /** Where the state lives, for messages. */
  readonly description: string;
  close(): Promise<void>;
}

/** Whether `read` is of another version of the state than `heads` (readPayloads read it again in full). */
export function movedSince(heads: StateVersion, read: StateVersion): boolean {
  return read.lineage !== heads.lineage || read.serial !== heads.serial;
}

export function emptySnapshot(lineage: string): StateSnapshot {
  return { lineage, serial: 0, hashKey: undefined, resources: new Map() };
}

/** Checks a record read from storage; returns what is wrong, or undefined. */
export function recordProblem(value: unknown): string | undefined {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return "a record is not an object";
  const r = value as Record<string, unknown>;
  for (const field of ["id", "kind", "name", "status", "createdAt", "updatedAt"]) {
    if (typeof r[field] !== "string") return `record ${typeof r.id === "string" ? r.id : "?"} has no ${field}`;
  }
  if (!["applied", "failed", "in-doubt"].includes(r.status as string)) return `record ${String(r.id)} has an unknown status ${String(r.status)}`;
  if (r.address === null || typeof r.address !== "object") return `record ${String(r.id)} has no address`;
  const renames = renamesProblem(r.renames);
  return renames === undefined ? undefined : `record ${String(r.id)}: ${renames}`;
}
