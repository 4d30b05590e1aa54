/**
 * One resource's change: what the planner decides for a desired resource given its record
 * (create, update, no-op, adopt or blocked, and why), and for a record whose resource left the
 * repository (an orphan). `plan.ts` assembles these into the plan.
 */
import { materialize } from "../kinds/document-ref.js";
import { operations, queryString } from "../contract/operations.js";
import type { OperationName } from "../contract/operations.js";
import type { Deferred } from "../deferred.js";
import { InternalError } from "../errors.js";
import type { InterfaceName } from "../contract/interfaces.js";
import { kindModule } from "../kinds/registry.js";
import { isSensitiveMarker, sameAsMarker } from "../secrets/markers.js";
import { holdsPayload } from "../record/lazy-record.js";
import type { RecordHead } from "../record/lazy-record.js";
import type { ResourceRecord, StateSnapshot } from "../record/state.js";
import { planAdoption } from "./adoption.js";
import { inDoubtHint, isUpsert, upsertInDoubtNote } from "./in-doubt.js";
import { reactivationOf } from "./reactivation.js";
import type { AdoptionClaims } from "./adoption.js";
import { classified } from "./breaking/classify.js";
import type { BreakingChange, Compatibility } from "../kinds/breaking/types.js";
import type { Desired } from "./desired.js";
import { addedFields, diffValues } from "./diff.js";
import type { FieldChange } from "./diff.js";
import { withoutUnchangedSealed } from "./not-compared.js";
import type { NotCompared } from "./not-compared.js";

export type Action = "create" | "update" | "no-op" | "blocked" | "orphan" | "adopt" | "moved";

export interface PlannedOperation {
  readonly name: OperationName;
  readonly number: number;
  readonly interface: InterfaceName;
  readonly method: string;
  /** Path with its parameters filled in, below the interface's base address. */
  readonly path: string;
  /** Query string (`?a=b`), sensitive values shown as (sensitive). */
  readonly query: string;
  /** Travels inside a batch call (operation 4) when the config names a batch listen path. */
  readonly batchable: boolean;
}

export interface PlannedChange {
  readonly id: string;
  readonly kind: string;
  readonly name: string;
  readonly action: Action;
  readonly wave: number;
  readonly operation?: PlannedOperation;
  /** OrgKey: reset_quota=1 is sent with this call. */
  readonly quotaReset?: boolean;
  /** Orphan deactivated under `orphans: deactivate`. */
  readonly deactivate?: boolean;
  /** Renamed: the record of `from` moves to this name (docs/user/renames.md); `moved` alone sends nothing. */
  readonly moved?: { readonly from: string; readonly declared: boolean };
  /** A deactivated object declared again: this write switches it on. */
  readonly reactivate?: boolean;
  /** Adopted: recorded under this server id instead of created (with an update where the kind has one). */
  readonly adopt?: { readonly serverId: string; readonly source: "repository" | "command" };
  /** What the change does to the object's fields: listed, or (a first apply) every field of the request (see `fieldChanges`). */
  readonly fields: ChangeFields;
  /** Updates of ApiDefinition, OrgKey and OAuthClient: what the change does to consumers. */
  readonly compatibility?: Compatibility;
  /** The breaking part of `compatibility` (present, maybe empty, whenever it is). */
  readonly breaking?: readonly BreakingChange[];
  readonly reason?: string;
  readonly hint?: string;
  readonly notes: readonly string[];
  /** Sensitive fields holding SOPS values this plan could not decrypt (not-compared.ts). */
  readonly notCompared?: readonly NotCompared[];
  readonly source?: { readonly file: string; readonly line: number };
}

/** A change before the planner assigns its wave. */
export type Draft = Omit<PlannedChange, "wave">;
type Base = Pick<PlannedChange, "id" | "kind" | "name" | "source">;

/** Does the change call the server? */
export function isExecutable(c: PlannedChange): boolean {
  return (
    c.operation !== undefined && (c.action === "create" || c.action === "update" || c.action === "adopt" || (c.action === "orphan" && c.deactivate === true))
  );
}

/** Fills a path template; a parameter without a value stays `{name}` (values are encoded, so a brace is always one). */
function fillPath(template: string, address: Readonly<Record<string, string>>): string {
  return template.replace(/\{(\w+)\}/g, (m, key: string) => (address[key] === undefined || address[key] === "" ? m : encodeURIComponent(address[key])));
}

/** The path parameters of an operation that `address` leaves unfilled. */
export function unfilledParams(name: OperationName, address: Readonly<Record<string, string>>): string[] {
  return [...fillPath(operations[name].path, address).matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
}

/**
 * No request ever leaves with an unfilled path parameter (`PUT /webhooks/{webhook_id}`): a change
 * whose operation cannot be addressed is blocked, saying which identity is missing.
 */
export function refuseUnaddressable(c: Draft): Draft {
  const op = c.operation;
  if (op === undefined || !isExecutable(c as PlannedChange)) return c;
  const missing = [...op.path.matchAll(/\{(\w+)\}/g)].map((m) => m[1]!);
  if (missing.length === 0) return c;
  const { operation: _op, quotaReset: _q, deactivate: _d, ...rest } = c;
  return {
    ...rest,
    action: c.action === "orphan" ? "orphan" : "blocked",
    reason: `${op.method} ${op.path} cannot be sent: the object's ${missing.map((m) => `\`${m}\``).join(", ")} is unknown (neither the spec nor the state holds it)`,
    hint: `write the server id in the spec, or run \`gatesync state resolve ${c.id} --forget\` so that the next apply creates it (when it does not exist on the server)`,
  };
}

const showQueryValue = (v: unknown): string => (isSensitiveMarker(v) ? "(sensitive)" : encodeURIComponent(String(v)));

export function plannedOperation(
  name: OperationName,
  address: Readonly<Record<string, string>>,
  query: Readonly<Record<string, unknown>>,
  reset: boolean,
  batching: boolean,
): PlannedOperation {
  const spec = operations[name];
  return {
    name,
    number: spec.number,
    interface: spec.interface,
    method: spec.method,
    path: fillPath(spec.path, address),
    query: queryString(query, reset, showQueryValue),
    batchable: batching && spec.batchable,
  };
}

export const hinted = (hint: string | undefined): { hint?: string } => (hint === undefined ? {} : { hint });

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

/**
 * A first apply's field changes (a create, or an update of a kind that cannot be created):
 * every field of its desired request, as added. Made from the request when read, not held
 * beside it — a first plan of 100,000 resources would otherwise hold each request a second
 * time as field changes. `read()` makes them again each time from `desired.request.compare`
 * and fails as reading that compare fails (see PlannedRequest in desired.ts).
 */
export class RequestFields implements Deferred<readonly FieldChange[]> {
  /** Public so that deep equality compares changes by their desired resource (its content hash). */
  readonly desired: Desired;

  constructor(desired: Desired) {
    this.desired = desired;
  }

  read(): readonly FieldChange[] {
    return addedFields(this.desired.request.readCompare());
  }

  /** Serialised (a plan in JSON, saved or sent), the fields themselves. */
  toJSON(): readonly FieldChange[] {
    return this.read();
  }
}

/** A change's fields: listed, or deferred to its request (a plan read back from JSON always lists them). */
export type ChangeFields = readonly FieldChange[] | RequestFields;

/** The field changes of a change, made from its request when they are deferred to it. */
export function fieldChanges(change: Pick<PlannedChange, "fields">): readonly FieldChange[] {
  return change.fields instanceof RequestFields ? change.fields.read() : change.fields;
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
  if (record?.status === "in-doubt" && req.update !== undefined) {
    // an upsert whose write is in doubt: written again, as an update (it may exist now)
    return {
      ...base,
      action: "update",
      operation: plannedOperation(req.update, address, req.query, reset, ctx.batching),
      ...(reset ? { quotaReset: true } : {}),
      fields,
      notes,
    };
  }
  if (req.create !== undefined) {
    return {
      ...base,
      action: "create",
      operation: plannedOperation(req.create, address, req.query, reset, ctx.batching),
      ...(reset ? { quotaReset: true } : {}),
      fields,
      notes,
    };
  }
  if (req.update === undefined) throw new InternalError(`${d.id}: its kind can neither be created nor updated`);
  notes.push("first apply: the interfaces cannot create this object, so it must already exist on the server; its current values cannot be read");
  return {
    ...base,
    action: "update",
    operation: plannedOperation(req.update, address, req.query, reset, ctx.batching),
    ...(reset ? { quotaReset: true } : {}),
    fields,
    notes,
  };
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
  const fields =
    changed === undefined
      ? []
      : withoutUnchangedSealed(
          diffValues(changed.before, changed.after).filter((f) => ctx.hashKey === undefined || !sameAsMarker(f.before, f.after, ctx.hashKey)),
        );
  // classified below when the spec's own fields changed (not for a trigger or a reactivation alone)
  const specChanged = fields.length > 0;
  const triggerChanged = req.trigger !== undefined && req.trigger !== record.trigger;
  if (triggerChanged) fields.push({ path: "quotaResetTrigger", op: "change", before: record.trigger, after: req.trigger });
  const reactivation = reactivationOf(d, record);
  if (reactivation?.refused !== undefined)
    return { ...base, action: "blocked", fields: [reactivation.field, ...fields], reason: reactivation.refused.reason, hint: reactivation.refused.hint, notes };
  if (reactivation !== undefined) {
    fields.unshift(reactivation.field);
    notes.push(reactivation.note);
  }
  const retry = record.status === "failed" || record.status === "in-doubt" || reactivation !== undefined;
  if (record.status === "failed") notes.push(`the last attempt failed: ${record.error ?? "unknown error"}`);
  if (fields.length === 0 && !triggerChanged && !retry) {
    if (ctx.reassert && req.update !== undefined && operations[req.update].idempotent) {
      return {
        ...base,
        action: "update",
        operation: plannedOperation(req.update, address, req.query, false, ctx.batching),
        fields: [],
        notes: [...notes, "re-asserted: sent again to undo changes made outside git"],
      };
    }
    return { ...base, action: "no-op", fields: [], notes };
  }
  const kind = kindModule(d.kind);
  if (req.update === undefined) {
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
  const ignored = req.ignoredByUpdate ?? [];
  const ignoredChanges = fields.filter((f) => ignored.some((i) => f.path === i || f.path.startsWith(`${i}.`)));
  if (ignoredChanges.length > 0 && ignoredChanges.length === fields.length && !triggerChanged && !retry) {
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
