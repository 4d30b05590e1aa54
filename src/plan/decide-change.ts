/**
 * What the planner decides for a declared resource given its record: create, update, no-op,
 * adopt or blocked, and why (a record whose resource left the repository is orphan.ts's).
 * `plan.ts` assembles the changes into the plan.
 */
import { materialize } from "../kinds/document-ref.js";
import { operations } from "../contract/operations.js";
import { InternalError } from "../errors.js";
import { kindModule } from "../kinds/registry.js";
import { sameAsMarker } from "../secrets/markers.js";
import { holdsPayload } from "../record/wrappers/lazy-record.js";
import type { RecordHead } from "../record/wrappers/lazy-record.js";
import type { ResourceRecord, StateSnapshot } from "../record/state.js";
import { planAdoption } from "./names/adoption.js";
import type { AdoptionClaims } from "./names/adoption.js";
import { classified } from "./breaking/classify.js";
import type { Desired } from "./desired.js";
import { addedFields, diffValues } from "./diff.js";
import type { FieldChange } from "./diff.js";
import { inDoubtHint, isUpsert, upsertInDoubtNote } from "./in-doubt.js";
import { RequestFields, hinted, plannedOperation } from "./plan-change.js";
import type { Draft, PlannedChange } from "./plan-change.js";
import { reactivationOf } from "./reactivation.js";
import { withoutUnchangedSealed } from "./not-compared.js";

type Base = Pick<PlannedChange, "id" | "kind" | "name" | "source">;

/** What planning one resource consults beyond its desired form and its record. */
export interface ChangeContext {
  /** The config names a batch path: batchable operations travel in batch calls. */
  readonly batching: boolean;
  readonly reassert: boolean;
  readonly claims: AdoptionClaims;
  readonly hashKey: string | undefined;
}

/**
 * Whether planning `d` (undefined: its resource left the repository) against `record` may read
 * the record's payloads (what was applied, what was attempted). Not for a resource recorded as
 * applied, not adopted, whose content hash is unchanged: its plan compares hashes only. The one
 * rule on both sides: the state reads the payloads of exactly these records
 * (`payloadsNeeded`), and `planChange` reads a payload only where it holds (`planUpdate` is
 * given a `RecordHead`, which has none).
 */
export function comparesPayloads(d: Desired | undefined, record: ResourceRecord): boolean {
  return d === undefined || record.status !== "applied" || record.appliedHash !== d.hash || d.adopt !== undefined || record.adopted !== undefined;
}

/** The records whose payloads a plan of `desired` against `state` may read (see comparesPayloads). */
export function payloadsNeeded(desired: readonly Desired[], state: StateSnapshot): Set<string> {
  const byId = new Map(desired.map((d) => [d.id, d]));
  const needed = new Set<string>();
  for (const r of state.resources.values()) if (comparesPayloads(byId.get(r.id), r)) needed.add(r.id);
  return needed;
}

/** The change one desired resource needs, given its record. */
export function planChange(d: Desired, record: ResourceRecord | undefined, ctx: ChangeContext): Draft {
  const base = { id: d.id, kind: d.kind, name: d.name, source: d.source };
  const req = d.request;
  const notes = [...(req.notes ?? [])];
  if (record?.status === "in-doubt" && !isUpsert(req.create)) {
    const settle = kindModule(d.kind).settlesByResend;
    if (
      settle === undefined ||
      req.create === undefined ||
      holdsPayload(record, "applied") ||
      !settle.sameObject(record.attempted?.read() ?? {}, req.readCompare())
    ) {
      return {
        ...base,
        action: "blocked",
        fields: [],
        reason: `a create was sent but its outcome is unknown (${record.error ?? "no answer"}): creating it again could make a duplicate`,
        ...hinted(inDoubtHint(d.kind, d.id, "declared")),
        notes,
      };
    }
    notes.push(
      `the last create's outcome is unknown (${record.error ?? "no answer"}): it is sent again to settle it — a duplicate is refused with ${settle.status}, which means the earlier create happened`,
    );
  }
  // an upsert in doubt (an org key's write carrying reset_quota=1) is written again, its reset never
  if (record?.status === "in-doubt") notes.push(upsertInDoubtNote(record));
  const adoption = planAdoption(d, record, ctx.claims);
  if (adoption?.action === "blocked") return { ...base, action: "blocked", fields: [], reason: adoption.reason, hint: adoption.hint, notes };
  if (adoption?.action === "adopt") {
    const fields = addedFields(req.readCompare());
    const operation = adoption.update === undefined ? {} : { operation: plannedOperation(adoption.update, adoption.address, req.query, false, ctx.batching) };
    return {
      ...base,
      action: "adopt",
      adopt: { serverId: adoption.serverId, source: adoption.source },
      ...operation,
      fields,
      notes: [...notes, adoption.note],
    };
  }
  if (record === undefined || !holdsPayload(record, "applied")) return planFirstApply(base, d, record, notes, ctx);
  // the same content hash means the same content: no field-by-field comparison needed. What was
  // applied is parsed (lazy-record.ts) only here, and documents held by reference are read once,
  // for the diff and its classification
  const changed =
    comparesPayloads(d, record) && record.appliedHash !== d.hash
      ? { before: materialize(record.applied?.read() ?? {}), after: materialize(req.readCompare()) }
      : undefined;
  return planUpdate(base, d, record, changed, notes, ctx);
}

/** Nothing of the resource was applied yet: it is created (or, for a kind without create, updated in place). */
function planFirstApply(base: Base, d: Desired, record: ResourceRecord | undefined, notes: string[], ctx: ChangeContext): Draft {
  const req = d.request;
  const address = { ...req.address, ...record?.address };
  // a trigger recorded in doubt was sent once: never again (see upsertInDoubtNote)
  const reset = req.trigger !== undefined && req.trigger !== record?.trigger;
  // every field of the request: made from it when read (see RequestFields)
  const fields = new RequestFields(d);
  if (record?.status === "failed") notes.push(`the last attempt failed: ${record.error ?? "unknown error"}`);
  const sending = (action: "create" | "update", call: NonNullable<typeof req.create>): Draft => ({
    ...base,
    action,
    operation: plannedOperation(call, address, req.query, reset, ctx.batching),
    ...(reset ? { quotaReset: true } : {}),
    fields,
    notes,
  });
  // an upsert whose write is in doubt: written again, as an update (it may exist now)
  if (record?.status === "in-doubt" && req.update !== undefined) return sending("update", req.update);
  if (req.create !== undefined) return sending("create", req.create);
  if (req.update === undefined) throw new InternalError(`${d.id}: its kind can neither be created nor updated`);
  notes.push("first apply: the interfaces cannot create this object, so it must already exist on the server; its current values cannot be read");
  return sending("update", req.update);
}

/** What was applied and what is desired, both read, when their content hashes differ. */
interface Compared {
  readonly before: Readonly<Record<string, unknown>>;
  readonly after: Readonly<Record<string, unknown>>;
}

/**
 * The resource was applied before: compared with what was applied (`changed`, read by the
 * caller), it is left alone, updated or blocked. Its record comes without payloads.
 */
function planUpdate(base: Base, d: Desired, record: RecordHead, changed: Compared | undefined, notes: string[], ctx: ChangeContext): Draft {
  const req = d.request;
  const address = { ...req.address, ...record.address };
  const { fields, specChanged, triggerChanged } = updateFields(d, record, changed, ctx);
  const reactivation = reactivationOf(d, record);
  if (reactivation?.refused !== undefined)
    return { ...base, action: "blocked", fields: [reactivation.field, ...fields], reason: reactivation.refused.reason, hint: reactivation.refused.hint, notes };
  if (reactivation !== undefined) {
    fields.unshift(reactivation.field);
    notes.push(reactivation.note);
  }
  const retry = record.status === "failed" || record.status === "in-doubt" || reactivation !== undefined;
  if (record.status === "failed") notes.push(`the last attempt failed: ${record.error ?? "unknown error"}`);
  if (fields.length === 0 && !triggerChanged && !retry) return unchanged(base, d, address, notes, ctx);
  if (req.update === undefined) return noUpdate(base, d, fields, notes);
  const ignoredAll = ignoredByUpdate(base, d, fields, notes, triggerChanged || retry);
  if (ignoredAll !== undefined) return ignoredAll;
  return {
    ...base,
    action: "update",
    operation: plannedOperation(req.update, address, req.query, triggerChanged, ctx.batching),
    ...(triggerChanged ? { quotaReset: true } : {}),
    ...(reactivation === undefined ? {} : { reactivate: true }),
    fields,
    ...(specChanged && changed !== undefined ? classified(d.kind, changed.before, changed.after) : {}),
    notes,
  };
}

/** What an update changes: the spec's fields that differ (a sensitive value by its marker's hash), then a new trigger. */
function updateFields(
  d: Desired,
  record: RecordHead,
  changed: Compared | undefined,
  ctx: ChangeContext,
): { readonly fields: FieldChange[]; readonly specChanged: boolean; readonly triggerChanged: boolean } {
  const fields =
    changed === undefined
      ? []
      : withoutUnchangedSealed(
          diffValues(changed.before, changed.after).filter((f) => ctx.hashKey === undefined || !sameAsMarker(f.before, f.after, ctx.hashKey)),
        );
  // classified by the caller when the spec's own fields changed (not for a trigger or a reactivation alone)
  const specChanged = fields.length > 0;
  const triggerChanged = d.request.trigger !== undefined && d.request.trigger !== record.trigger;
  if (triggerChanged) fields.push({ path: "quotaResetTrigger", op: "change", before: record.trigger, after: d.request.trigger });
  return { fields, specChanged, triggerChanged };
}

/** Nothing to change: a no-op, or — re-asserting, with an idempotent update — the same values sent again. */
function unchanged(base: Base, d: Desired, address: Readonly<Record<string, string>>, notes: string[], ctx: ChangeContext): Draft {
  const update = d.request.update;
  if (ctx.reassert && update !== undefined && operations[update].idempotent) {
    return {
      ...base,
      action: "update",
      operation: plannedOperation(update, address, d.request.query, false, ctx.batching),
      fields: [],
      notes: [...notes, "re-asserted: sent again to undo changes made outside git"],
    };
  }
  return { ...base, action: "no-op", fields: [], notes };
}

/** A change the interfaces cannot make: the kind has no update, and the object exists. */
function noUpdate(base: Base, d: Desired, fields: readonly FieldChange[], notes: string[]): Draft {
  const kind = kindModule(d.kind);
  const byHand = `; once the server matches the spec, \`gatesync state resolve ${d.id} --accept\` records it as applied`;
  return {
    ...base,
    action: "blocked",
    fields,
    reason: `${kind.noUpdate?.reason ?? "the interfaces offer no update for this kind"}; the object was created before`,
    hint: `${kind.noUpdate?.hint ?? "change it on the server by hand and set the spec to match"}${byHand}`,
    notes,
  };
}

/**
 * Fields the update ignores: blocked when they are all that changed and nothing else makes the
 * call (`sendAnyway`: a new trigger, a retry); else noted as not changing, and undefined.
 */
function ignoredByUpdate(base: Base, d: Desired, fields: readonly FieldChange[], notes: string[], sendAnyway: boolean): Draft | undefined {
  const ignored = d.request.ignoredByUpdate ?? [];
  const ignoredChanges = fields.filter((f) => ignored.some((i) => f.path === i || f.path.startsWith(`${i}.`)));
  if (ignoredChanges.length > 0 && ignoredChanges.length === fields.length && !sendAnyway) {
    return {
      ...base,
      action: "blocked",
      fields,
      reason: `the update ignores ${ignoredChanges.map((f) => `\`${f.path}\``).join(", ")}: it cannot be changed through this interface`,
      hint: `change it on the server by hand (e.g. rotate the secret in the dashboard), then run \`gatesync state resolve ${d.id} --accept\` to record the spec as applied`,
      notes,
    };
  }
  if (ignoredChanges.length > 0) notes.push(`${ignoredChanges.map((f) => f.path).join(", ")} will not change: the update ignores it`);
  return undefined;
}
