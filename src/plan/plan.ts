/**
 * The planner: a pure function (desired resources, state, options) → plan. No IO, no clock
 * (the time comes in the options), no randomness: the same input gives the same plan.
 */
import { createHash } from "node:crypto";
import { operations, queryString } from "../contract/operations.js";
import type { OperationName } from "../contract/operations.js";
import { ErrorCode, InternalError, PlanError } from "../errors.js";
import type { InterfaceName } from "../kinds/kind.js";
import { kindNames } from "../kinds/kind.js";
import { isKindName, kindModule, knownKind } from "../kinds/registry.js";
import type { ResourceRecord, StateSnapshot } from "../record/state.js";
import type { PlanSelection } from "../select/selection.js";
import { adoptionClaims, planAdoption } from "../adopt/adoption.js";
import type { AdoptionClaims } from "../adopt/adoption.js";
import type { Desired } from "./desired.js";
import { diffValues } from "./diff.js";
import type { FieldChange } from "./diff.js";
import { canonicalWith } from "../kinds/canonical.js";
import { materialize } from "../kinds/document-ref.js";
import { classified, isBreaking } from "./breaking/classify.js";
import type { BreakingChange, Compatibility } from "./breaking/types.js";
import { planWaves } from "./graph.js";
import { containsSensitive, isSensitiveMarker, sameAsMarker } from "./sensitive.js";

export const planFormatVersion = 1;

export type Action = "create" | "update" | "no-op" | "blocked" | "orphan" | "adopt";

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
  /** Adopted: recorded under this server id instead of created (with an update where the kind has one). */
  readonly adopt?: { readonly serverId: string; readonly source: "repository" | "command" };
  readonly fields: readonly FieldChange[];
  /** Updates of ApiDefinition, OrgKey and OAuthClient: what the change does to consumers. */
  readonly compatibility?: Compatibility;
  /** The breaking part of `compatibility` (present, maybe empty, whenever it is). */
  readonly breaking?: readonly BreakingChange[];
  readonly reason?: string;
  readonly hint?: string;
  readonly notes: readonly string[];
  readonly source?: { readonly file: string; readonly line: number };
}

export interface CallCounts {
  readonly gateway: number;
  readonly portal: number;
  readonly dashboard: number;
  readonly llm: number;
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
  readonly state: { readonly lineage: string; readonly serial: number };
  readonly orphanPolicy: "report" | "deactivate";
  readonly batch?: { readonly maxSize: number };
  /** Present when the plan covers part of the repository and state (`--target`, selectors …). */
  readonly selection?: PlanSelection;
  readonly changes: readonly PlannedChange[];
  readonly summary: PlanSummary;
  /** Hash of the changes, independent of the hash key: a re-plan must match it to apply. */
  readonly digest: string;
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
}

/** What a partial plan needs beyond its selected resources. */
export interface PlanScope {
  /** Every resource of the repository: a record of one of them is no orphan, selected or not. */
  readonly present: ReadonlySet<string>;
  /** Whether an orphan's record lies inside the selection. */
  readonly includesRecord: (record: ResourceRecord) => boolean;
  readonly summary: PlanSelection;
}

/** Does the change call the server? */
export function isExecutable(c: PlannedChange): boolean {
  return c.operation !== undefined && (c.action === "create" || c.action === "update" || c.action === "adopt" || (c.action === "orphan" && c.deactivate === true));
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
function refuseUnaddressable(c: Omit<PlannedChange, "wave">): Omit<PlannedChange, "wave"> {
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

function plannedOperation(name: OperationName, address: Readonly<Record<string, string>>, query: Readonly<Record<string, unknown>>, reset: boolean, batching: boolean): PlannedOperation {
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

const inDoubtHint = (id: string): string =>
  `find out whether the object exists on the server: if it does, record it with \`gatesync state resolve ${id} --id <server id>\`; if it does not, \`gatesync state resolve ${id} --forget\` lets the next apply create it`;

function planOne(d: Desired, record: ResourceRecord | undefined, batching: boolean, reassert: boolean, claims: AdoptionClaims, hashKey: string | undefined): Omit<PlannedChange, "wave"> {
  const base = { id: d.id, kind: d.kind, name: d.name, source: d.source };
  const req = d.request;
  const notes = [...(req.notes ?? [])];
  const address = { ...req.address, ...record?.address };
  if (record?.status === "in-doubt") {
    const settle = kindModule(d.kind).settlesByResend;
    if (settle === undefined || req.create === undefined || record.applied !== undefined || !settle.sameObject(record.attempted ?? {}, req.compare)) {
      return { ...base, action: "blocked", fields: [], reason: `a create was sent but its outcome is unknown (${record.error ?? "no answer"}): creating it again could make a duplicate`, hint: inDoubtHint(d.id), notes };
    }
    notes.push(`the last create's outcome is unknown (${record.error ?? "no answer"}): it is sent again to settle it — a duplicate is refused with ${settle.status}, which means the earlier create happened`);
  }
  const adoption = planAdoption(d, record, claims);
  if (adoption?.action === "blocked") return { ...base, action: "blocked", fields: [], reason: adoption.reason, hint: adoption.hint, notes };
  if (adoption?.action === "adopt") {
    const fields = Object.keys(req.compare).sort().flatMap((k) => diffValues(undefined, req.compare[k], [k]));
    const operation = adoption.update === undefined ? {} : { operation: plannedOperation(adoption.update, adoption.address, req.query, false, batching) };
    return { ...base, action: "adopt", adopt: { serverId: adoption.serverId, source: adoption.source }, ...operation, fields, notes: [...notes, adoption.note] };
  }
  const applied = record?.applied;
  if (applied === undefined) {
    const reset = req.trigger !== undefined;
    const fields = diffValues(undefined, req.compare).length === 0 ? [] : Object.keys(req.compare).sort().flatMap((k) => diffValues(undefined, req.compare[k], [k]));
    if (record?.status === "failed") notes.push(`the last attempt failed: ${record.error ?? "unknown error"}`);
    if (req.create !== undefined) {
      return { ...base, action: "create", operation: plannedOperation(req.create, address, req.query, reset, batching), ...(reset ? { quotaReset: true } : {}), fields, notes };
    }
    if (req.update === undefined) throw new InternalError(`${d.id}: its kind can neither be created nor updated`);
    notes.push("first apply: the interfaces cannot create this object, so it must already exist on the server; its current values cannot be read");
    return { ...base, action: "update", operation: plannedOperation(req.update, address, req.query, reset, batching), ...(reset ? { quotaReset: true } : {}), fields, notes };
  }
  // the same content hash means the same content: no field-by-field comparison needed
  // documents held by reference are read once here, for the diff and its classification
  const changed = record?.appliedHash === d.hash ? undefined : { before: materialize(applied), after: materialize(req.compare) };
  const fields = changed === undefined ? [] : diffValues(changed.before, changed.after).filter((f) => hashKey === undefined || !sameAsMarker(f.before, f.after, hashKey));
  const triggerChanged = req.trigger !== undefined && req.trigger !== record?.trigger;
  const retry = record?.status === "failed";
  if (retry) notes.push(`the last attempt failed: ${record?.error ?? "unknown error"}`);
  if (fields.length === 0 && !triggerChanged && !retry) {
    if (reassert && req.update !== undefined && operations[req.update].idempotent) {
      return { ...base, action: "update", operation: plannedOperation(req.update, address, req.query, false, batching), fields: [], notes: [...notes, "re-asserted: sent again to undo changes made outside git"] };
    }
    return { ...base, action: "no-op", fields: [], notes };
  }
  const kind = kindModule(d.kind);
  if (req.update === undefined) {
    const byHand = `; once the server matches the spec, \`gatesync state resolve ${d.id} --accept\` records it as applied`;
    return { ...base, action: "blocked", fields, reason: `${kind.noUpdate?.reason ?? "the interfaces offer no update for this kind"}; the object was created before`, hint: `${kind.noUpdate?.hint ?? "change it on the server by hand and set the spec to match"}${byHand}`, notes };
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
    operation: plannedOperation(req.update, address, req.query, triggerChanged, batching),
    ...(triggerChanged ? { quotaReset: true } : {}),
    fields,
    ...(fields.length > 0 && changed !== undefined ? classified(d.kind, changed.before, changed.after) : {}),
    notes,
  };
}

function planOrphan(record: ResourceRecord, policy: "report" | "deactivate", batching: boolean): Omit<PlannedChange, "wave"> {
  const base = { id: record.id, kind: record.kind, name: record.name, fields: [] as FieldChange[] };
  const kept = "no interface deletes it: it stays on the server, and in the state until `gatesync state resolve " + record.id + " --forget`";
  if (record.status === "in-doubt") return { ...base, action: "orphan", reason: `removed from the repository while in doubt; ${kept}`, hint: inDoubtHint(record.id), notes: [] };
  if (record.applied === undefined && record.status === "failed") {
    // every attempt failed with a definite answer (e.g. 404: the API never existed): nothing of it is on the server
    return { ...base, action: "orphan", reason: `removed from the repository; it was never applied (the last attempt failed: ${record.error ?? "unknown error"}), so nothing of it is on the server`, hint: `\`gatesync state resolve ${record.id} --forget\` drops its record`, notes: [] };
  }
  if (record.deactivatedAt !== undefined) return { ...base, action: "orphan", reason: `removed from the repository; deactivated on ${record.deactivatedAt}; ${kept}`, notes: [] };
  if (policy === "report") return { ...base, action: "orphan", reason: `removed from the repository; ${kept}`, hint: "set `orphans: deactivate` in gatesync.yaml to deactivate API definitions and org keys that leave the repository", notes: [] };
  const deactivation = knownKind(record.kind)?.deactivation;
  if (deactivation !== undefined) {
    const applied = record.applied ?? {};
    if (containsSensitive(applied) || deactivation.body(applied, record.address) === undefined) {
      return { ...base, action: "orphan", reason: `removed from the repository; not deactivated: ${deactivation.refusal.reason}; ${kept}`, hint: deactivation.refusal.hint, notes: [] };
    }
    return {
      ...base,
      action: "orphan",
      deactivate: true,
      operation: plannedOperation(deactivation.operation, record.address, deactivation.query(applied), false, batching),
      fields: [{ path: deactivation.field, op: "change", before: deactivation.before(applied), after: deactivation.after }],
      reason: `removed from the repository: deactivated (${deactivation.effect})`,
      notes: [deactivation.note?.(applied)].filter((n): n is string => n !== undefined),
    };
  }
  return { ...base, action: "orphan", reason: `removed from the repository; no interface can delete or deactivate a ${record.kind}; ${kept}`, hint: "remove it on the server by hand, then forget it", notes: [] };
}

function countCalls(changes: readonly PlannedChange[], batch: PlanOptions["batch"]): CallCounts {
  const counts = { gateway: 0, portal: 0, dashboard: 0, llm: 0, batchCalls: 0, batched: 0 };
  const batchedPerWave = new Map<number, number>();
  for (const c of changes) {
    if (!isExecutable(c) || c.operation === undefined) continue;
    if (c.operation.batchable && batch !== undefined) {
      batchedPerWave.set(c.wave, (batchedPerWave.get(c.wave) ?? 0) + 1);
      counts.batched++;
    } else {
      counts[c.operation.interface]++;
    }
  }
  for (const n of batchedPerWave.values()) counts.batchCalls += Math.ceil(n / (batch?.maxSize ?? 1));
  return { ...counts, total: counts.gateway + counts.portal + counts.dashboard + counts.llm + counts.batchCalls };
}

/** The digest of a plan's changes, blind to the hash key (markers count as "sensitive"). */
export function planDigest(changes: readonly PlannedChange[]): string {
  // the canonical form of the whole list, hashed change by change: one change's text in memory
  // at a time instead of the whole plan's; documents held by reference count by their digest
  const hash = createHash("sha256").update("[");
  changes.forEach((c, i) => hash.update(`${i === 0 ? "" : ","}${canonicalWith(c, hideMarkers)}`));
  return hash.update("]").digest("hex");
}

const hideMarkers = (value: unknown): unknown => (isSensitiveMarker(value) ? "(sensitive)" : value);

const kindOrder = (kind: string): number => (isKindName(kind) ? kindNames.indexOf(kind) : kindNames.length);

export function computePlan(desired: readonly Desired[], state: StateSnapshot, options: PlanOptions): Plan {
  const waves = planWaves(desired.map((d) => ({ id: d.id, dependsOn: d.dependsOn })));
  if (!waves.ok) {
    throw new PlanError(ErrorCode.DEPENDENCY_CYCLE, `references form a cycle: ${waves.cycle.join(" → ")}`, { hint: "break the cycle: a resource may not depend, through references, on itself" });
  }
  const waveOf = new Map<string, number>();
  waves.waves.forEach((ids, i) => ids.forEach((id) => waveOf.set(id, i + 1)));
  const batching = options.batch !== undefined;
  const claims = adoptionClaims(desired, state);
  const changes: PlannedChange[] = desired.map((d) => ({ ...refuseUnaddressable(planOne(d, state.resources.get(d.id), batching, options.reassert === true, claims, options.hashKey)), wave: waveOf.get(d.id) ?? 1 }));
  const present = options.selection?.present ?? new Set(desired.map((d) => d.id));
  const orphanWave = waves.waves.length + 1;
  for (const record of state.resources.values()) {
    if (!present.has(record.id) && options.selection?.includesRecord(record) !== false) changes.push({ ...refuseUnaddressable(planOrphan(record, options.orphans, batching)), wave: orphanWave });
  }
  changes.sort((a, b) => a.wave - b.wave || kindOrder(a.kind) - kindOrder(b.kind) || (a.name < b.name ? -1 : a.name > b.name ? 1 : 0));
  const count = (a: Action): number => changes.filter((c) => c.action === a).length;
  const summary: PlanSummary = {
    resources: desired.length,
    create: count("create"),
    update: count("update"),
    noop: count("no-op"),
    blocked: count("blocked"),
    orphan: count("orphan"),
    adopt: count("adopt"),
    deactivate: changes.filter((c) => c.deactivate === true).length,
    quotaResets: changes.filter((c) => c.quotaReset === true).length,
    breaking: changes.filter(isBreaking).length,
    calls: countCalls(changes, options.batch),
  };
  return {
    formatVersion: planFormatVersion,
    createdAt: options.now,
    ...(options.commit === undefined ? {} : { commit: options.commit }),
    state: { lineage: state.lineage, serial: state.serial },
    orphanPolicy: options.orphans,
    ...(options.batch === undefined ? {} : { batch: options.batch }),
    ...(options.selection === undefined ? {} : { selection: options.selection.summary }),
    changes,
    summary,
    digest: planDigest(changes),
  };
}

/** Executable changes exist: what --detailed-exitcode reports as 2. */
export function hasChanges(plan: Plan): boolean {
  return plan.changes.some((c) => isExecutable(c) || c.action === "adopt");
}

/** Blocked changes exist: the repository asks for something no apply will do (exit code 3). */
export function hasBlocked(plan: Plan): boolean {
  return plan.changes.some((c) => c.action === "blocked");
}
