/**
 * The planner: a pure function (desired resources, state, options) → plan. No IO, no clock
 * (the time comes in the options), no randomness: the same input gives the same plan. Each
 * resource's change is decided in `plan-change.ts`; this file orders them in waves, counts the
 * calls and summarises.
 */
import { createHash } from "node:crypto";
import type { Deferred } from "../deferred.js";
import { ErrorCode, PlanError } from "../errors.js";
import { isKindName, kindNames } from "../kinds/registry.js";
import { canonicalWith } from "../kinds/canonical.js";
import { isSensitiveMarker } from "../secrets/markers.js";
import type { ResourceRecord, StateSnapshot } from "../record/state.js";
import type { PlanSelection } from "../select/selection.js";
import { adoptionClaims } from "./names/adoption.js";
import { guardDeactivations } from "./deactivation-guard.js";
import type { DeactivationGuard, MassDeactivation } from "./deactivation-guard.js";
import { declaredElsewhere, movedRecord, planMoves, supersededOrphan } from "./names/renames.js";
import type { Moves } from "./names/renames.js";
import { stayingDraft } from "./names/returns.js";
import { isBreaking } from "./breaking/classify.js";
import { perInterface } from "../contract/interfaces.js";
import type { InterfaceName, PerInterface } from "../contract/interfaces.js";
import type { Desired } from "./desired.js";
import { planWaves } from "./graph.js";
import { planChange } from "./decide-change.js";
import type { ChangeContext } from "./decide-change.js";
import { fieldChanges, isExecutable, movesRecord, refuseUnaddressable } from "./plan-change.js";
import { planOrphan } from "./orphan.js";
import { checkOwnership } from "./ownership-check.js";
import type { OwnershipView } from "./ownership-check.js";
import { notComparedFields } from "./not-compared.js";
import { holdsPayload } from "../record/wrappers/lazy-record.js";
import type { Action, Draft, PlannedChange } from "./plan-change.js";

export const planFormatVersion = 1;

/** Direct calls per interface (one member per registered interface, in registry order), then the batch calls. */
export interface CallCounts extends PerInterface<number> {
  /** Batch calls (operation 4) carrying gateway changes. */
  readonly batchCalls: number;
  /** Gateway changes carried inside those batch calls. */
  readonly batched: number;
  /** HTTP requests the apply will send (batch calls count once). */
  readonly total: number;
}

export interface PlanSummary {
  readonly resources: number;
  readonly create: number;
  readonly update: number;
  readonly noop: number;
  readonly blocked: number;
  readonly orphan: number;
  /** Absent in plans saved before adoption existed. */
  readonly adopt?: number;
  /** Renames: records moved to a new name (absent in plans saved before renames existed). */
  readonly moved?: number;
  /** Deactivated objects declared again and switched on (absent in older plans). */
  readonly reactivate?: number;
  readonly deactivate: number;
  readonly quotaResets: number;
  /** Changes with at least one breaking change. */
  readonly breaking: number;
  readonly calls: CallCounts;
}

export interface Plan {
  readonly formatVersion: number;
  readonly createdAt: string;
  readonly commit?: string;
  /** The state the plan was computed from: an apply of a saved plan refuses any other. */
  readonly state: {
    readonly lineage: string;
    readonly serial: number;
    /** Where the state was read (`gatesync plan` sets it): the config's, a --state SPEC, a daemon's GET /state. */
    readonly source?: string;
    /** The state was never written (or does not exist): everything is planned as a create. */
    readonly empty?: boolean;
  };
  readonly orphanPolicy: "report" | "deactivate";
  readonly batch?: { readonly maxSize: number };
  /** Present when the plan covers part of the repository and state (`--target`, selectors …). */
  readonly selection?: PlanSelection;
  readonly changes: readonly PlannedChange[];
  /** Present when the guard against mass deactivation withheld this plan's deactivations. */
  readonly massDeactivation?: MassDeactivation;
  readonly summary: PlanSummary;
  /**
   * Hash of the changes, independent of the hash key: a re-plan must match it to apply. Taken
   * when read (PlanDigest): a text or markdown plan, and an apply without `--plan`, never need it.
   */
  readonly digest: Deferred<string>;
}

export interface PlanOptions {
  readonly orphans: "report" | "deactivate";
  /** The gateway's batch settings, when configured. */
  readonly batch?: { readonly maxSize: number };
  readonly commit?: string;
  /** ISO time written into the plan. */
  readonly now: string;
  /**
   * Re-assert: resources recorded as applied whose update is idempotent are planned as updates
   * even when nothing changed, so that edits made outside git are undone.
   */
  readonly reassert?: boolean;
  /**
   * The key of the state's keyed hashes: a value recorded as a hash while it counted as
   * sensitive compares equal to the same value shown plainly (no spurious change when a field
   * stops counting as sensitive, e.g. a dashboard webhook's `X-Source` header).
   */
  readonly hashKey?: string;
  /** A partial plan: `desired` holds the selected resources only. */
  readonly selection?: PlanScope;
  /** The guard against mass deactivation (absent: no guard). */
  readonly deactivationGuard?: DeactivationGuard;
  /** The ownership registry's rows of this environment's targets, and who plans (absent: no check; ownership-check.ts). */
  readonly ownership?: OwnershipView;
}

/** What a partial plan needs beyond its selected resources. */
export interface PlanScope {
  /** Every resource of the repository: a record of one of them is no orphan, selected or not. */
  readonly present: ReadonlySet<string>;
  /** Whether an orphan's record lies inside the selection. */
  readonly includesRecord: (record: ResourceRecord) => boolean;
  /**
   * The objects (address keys, see KindModule.objectKeys) of the deactivatable kinds every
   * resource of the repository declares → its id: an orphan whose object a resource outside
   * the selection declares is not deactivated either.
   */
  readonly declaredObjects?: ReadonlyMap<string, string>;
  readonly summary: PlanSelection;
}

/** The calls an apply of these changes will make: direct ones per interface, batchable ones in batch calls of `batch.maxSize`. */
export function countCalls(changes: readonly PlannedChange[], batch: PlanOptions["batch"]): CallCounts {
  const direct: Record<InterfaceName, number> = { ...perInterface(() => 0) };
  let batched = 0;
  const batchedPerWave = new Map<number, number>();
  for (const c of changes) {
    if (!isExecutable(c) || c.operation === undefined) continue;
    if (c.operation.batchable && batch !== undefined) {
      batchedPerWave.set(c.wave, (batchedPerWave.get(c.wave) ?? 0) + 1);
      batched++;
    } else {
      direct[c.operation.interface]++;
    }
  }
  let batchCalls = 0;
  for (const n of batchedPerWave.values()) batchCalls += Math.ceil(n / (batch?.maxSize ?? 1));
  const directCalls = Object.values(direct).reduce((sum, n) => sum + n, 0);
  return { ...direct, batchCalls, batched, total: directCalls + batchCalls };
}

/** The digest of a plan's changes, blind to the hash key (markers count as "sensitive"). */
export function planDigest(changes: readonly PlannedChange[]): string {
  // the canonical form of the whole list, hashed change by change: one change's text in memory
  // at a time instead of the whole plan's; documents held by reference count by their digest
  const hash = createHash("sha256").update("[");
  // which values were not decrypted is the plan job's, not the change's: a plan without the key applies as one with it
  changes.forEach((c, i) => hash.update(`${i === 0 ? "" : ","}${canonicalWith({ ...c, fields: fieldChanges(c), notCompared: undefined }, hideMarkers)}`));
  return hash.update("]").digest("hex");
}

const hideMarkers = (value: unknown): unknown => (isSensitiveMarker(value) ? "(sensitive)" : value);

/**
 * A plan's digest, taken from its changes on each `read()` (a canonical walk of every change:
 * ~0.23 s at 10,000 resources), so that only what prints or compares it pays. Cannot fail.
 * Serialised, it is the digest.
 */
export class PlanDigest implements Deferred<string> {
  /** The plan's own list (the same array): what the digest is of, and what two digests compare by. */
  readonly of: readonly PlannedChange[];

  constructor(changes: readonly PlannedChange[]) {
    this.of = changes;
  }

  read(): string {
    return planDigest(this.of);
  }

  toJSON(): string {
    return this.read();
  }
}

const kindOrder = (kind: string): number => (isKindName(kind) ? kindNames.indexOf(kind) : kindNames.length);

/** The change in its wave. */
function withWave(draft: Draft, wave: number): PlannedChange {
  // most changes have no note: they share one empty list
  const notes = draft.notes.length === 0 ? noNotes : draft.notes;
  return { ...draft, notes, wave };
}

/** A change of a resource holding SOPS values not decrypted here, with the fields it could not compare (not-compared.ts). */
function withNotCompared(draft: Draft, d: Desired, record: ResourceRecord | undefined): Draft {
  if (d.notDecrypted !== true) return draft;
  const applied = record !== undefined && holdsPayload(record, "applied") ? record.applied?.read() : undefined;
  const notCompared = notComparedFields(d.request.readCompare(), applied);
  return notCompared.length === 0 ? draft : { ...draft, notCompared };
}

const noNotes: readonly string[] = Object.freeze([]);

/** A desired resource's change, a rename (renames.ts) taken into account. */
function planResource(d: Desired, state: StateSnapshot, moves: Moves, ctx: ChangeContext): Draft {
  const decision = moves.decisions.get(d.id);
  if (decision === undefined) return planChange(d, state.resources.get(d.id), ctx);
  if (decision.action === "blocked")
    return { id: d.id, kind: d.kind, name: d.name, source: d.source, action: "blocked", fields: [], reason: decision.reason, hint: decision.hint, notes: [] };
  if (decision.action === "note") {
    const draft = planChange(d, state.resources.get(d.id), ctx);
    return { ...draft, notes: [...draft.notes, decision.note] };
  }
  const draft = planChange(d, movedRecord(decision.from, d), ctx);
  const moved = { from: decision.from.id, declared: decision.declared, ...(decision.returned === true ? { returned: true as const } : {}) };
  const notes = [decision.note, ...draft.notes];
  // nothing changes on the server: the record changes its name, no call
  if (draft.action === "no-op") return { ...draft, action: "moved", moved, reason: `renamed from ${decision.from.id}`, notes };
  if (draft.action !== "blocked") return { ...draft, moved, notes };
  // a name coming back whose change cannot be made: its record moves back all the same, the object stays as it is
  return decision.returned === true ? { ...stayingDraft(draft, decision.from.id), moved, notes } : { ...draft, notes };
}

export function computePlan(desired: readonly Desired[], state: StateSnapshot, options: PlanOptions): Plan {
  const waves = planWaves(desired.map((d) => ({ id: d.id, dependsOn: d.dependsOn })));
  if (!waves.ok) {
    throw new PlanError(ErrorCode.DEPENDENCY_CYCLE, `references form a cycle: ${waves.cycle.join(" → ")}`, {
      hint: "break the cycle: a resource may not depend, through references, on itself",
    });
  }
  const waveOf = new Map<string, number>();
  waves.waves.forEach((ids, i) => ids.forEach((id) => waveOf.set(id, i + 1)));
  const batching = options.batch !== undefined;
  const ctx: ChangeContext = { batching, reassert: options.reassert === true, claims: adoptionClaims(desired, state), hashKey: options.hashKey };
  const present = options.selection?.present ?? new Set(desired.map((d) => d.id));
  const moves = planMoves(desired, state, present);
  const planned: PlannedChange[] = desired.map((d) =>
    withWave(refuseUnaddressable(withNotCompared(planResource(d, state, moves, ctx), d, state.resources.get(d.id))), waveOf.get(d.id) ?? 1),
  );
  const orphanWave = waves.waves.length + 1;
  const inScope = (record: ResourceRecord): boolean => options.selection?.includesRecord(record) !== false;
  for (const record of state.resources.values()) {
    if (present.has(record.id) || moves.movedAway.has(record.id) || !inScope(record)) continue;
    const declared = declaredElsewhere(record, moves, options.selection?.declaredObjects);
    planned.push(
      withWave(
        declared === undefined ? refuseUnaddressable(planOrphan(record, options.orphans, batching)) : supersededOrphan(record, declared.by, declared.key),
        orphanWave,
      ),
    );
  }
  const owned = options.ownership === undefined ? planned : checkOwnership(planned, new Map(desired.map((d) => [d.id, d])), state, options.ownership);
  const { changes, massDeactivation } = guardDeactivations(owned, state, options.deactivationGuard, options.commit);
  changes.sort((a, b) => a.wave - b.wave || kindOrder(a.kind) - kindOrder(b.kind) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const summary = summaryOf(changes, desired.length, options.batch);
  return {
    formatVersion: planFormatVersion,
    createdAt: options.now,
    ...(options.commit === undefined ? {} : { commit: options.commit }),
    state: { lineage: state.lineage, serial: state.serial },
    orphanPolicy: options.orphans,
    ...(options.batch === undefined ? {} : { batch: options.batch }),
    ...(options.selection === undefined ? {} : { selection: options.selection.summary }),
    changes,
    ...(massDeactivation === undefined ? {} : { massDeactivation }),
    summary,
    digest: new PlanDigest(changes),
  };
}

/** The counts of a plan's changes (`resources`: the desired resources planned). */
function summaryOf(changes: readonly PlannedChange[], resources: number, batch: PlanOptions["batch"]): PlanSummary {
  const count = (a: Action): number => changes.filter((c) => c.action === a).length;
  return {
    resources,
    create: count("create"),
    update: count("update"),
    noop: count("no-op"),
    blocked: count("blocked"),
    orphan: count("orphan"),
    adopt: count("adopt"),
    moved: changes.filter(movesRecord).length,
    reactivate: changes.filter((c) => c.reactivate === true).length,
    deactivate: changes.filter((c) => c.deactivate === true).length,
    quotaResets: changes.filter((c) => c.quotaReset === true).length,
    breaking: changes.filter(isBreaking).length,
    calls: countCalls(changes, batch),
  };
}

/** The plan with some of its changes replaced (the same ids, in the same order): its summary and digest of the new ones (the apply's ownership re-check). */
export function withChanges(plan: Plan, changes: readonly PlannedChange[]): Plan {
  return { ...plan, changes, summary: summaryOf(changes, plan.summary.resources, plan.batch), digest: new PlanDigest(changes) };
}

/** Executable changes exist: what --detailed-exitcode reports as 2. */
export function hasChanges(plan: Plan): boolean {
  return plan.changes.some((c) => isExecutable(c) || c.action === "adopt" || c.action === "moved");
}

/** Blocked changes exist: the repository asks for something no apply will do (exit code 3). */
export function hasBlocked(plan: Plan): boolean {
  return plan.changes.some((c) => c.action === "blocked");
}

/** A breaking change is planned: what `plan --fail-on-breaking` reports as exit code 4. */
export function hasBreaking(plan: Plan): boolean {
  return plan.changes.some(isBreaking);
}
