/**
 * Renames (docs/user/renames.md): a resource whose `metadata.name` changed still stands for the same
 * server object, and its record — server id, history, deactivation — moves to the new name
 * instead of the new name being created and the old one orphaned (a second product on the
 * portal, a 409 from the dashboard, or, under `orphans: deactivate`, the live object switched
 * off). Pure: decided from the desired resources and the state alone.
 *
 * - Declared: the annotation `gatesync.dev/moved-from: <old name>` moves the old record.
 * - Undeclared, by address (an API's apiId, a key's keyId, a client's id, a webhook's id): the
 *   calls address the same object whatever the resource is called, so the record moves.
 * - Returned: an earlier name of a record (its rename lineage) declared again moves it back (returns.ts).
 * - Undeclared, by content (a product's Name, a dashboard hook's name/method/target, identical
 *   LLM settings): a likeness, not a proof — blocked, never a second object, until declared.
 *
 * And whatever the names: an orphaned record whose object the repository still declares is
 * never deactivated (`declaredKeys`).
 */
import { kindModule, knownKind } from "../../kinds/registry.js";
import type { ObjectKeys } from "../../kinds/kind.js";
import { holdsPayload } from "../../record/wrappers/lazy-record.js";
import { formerHolders } from "../../record/lineage/rename-lineage.js";
import type { ResourceRecord, StateSnapshot } from "../../record/state.js";
import type { Desired } from "../desired.js";
import type { Draft } from "../plan-change.js";
import { returnMoves } from "./returns.js";
import type { MoveDecision } from "./move-decision.js";

export const movedFromAnnotation = "gatesync.dev/moved-from";

export interface Moves {
  /** By desired id. */
  readonly decisions: ReadonlyMap<string, MoveDecision>;
  /** Records that move to another name: no orphan is planned for them. */
  readonly movedAway: ReadonlySet<string>;
  /** The address key of each object the repository declares → the resource declaring it. */
  readonly declaredKeys: ReadonlyMap<string, string>;
}

const noMoves: Moves = { decisions: new Map(), movedAway: new Set(), declaredKeys: new Map() };

/** What a record last sent (or tried to): the keys of its object are read from it. */
function sentBy(record: ResourceRecord): Readonly<Record<string, unknown>> {
  if (holdsPayload(record, "applied")) return record.applied?.read() ?? {};
  return holdsPayload(record, "attempted") ? (record.attempted?.read() ?? {}) : {};
}

export function recordKeys(record: ResourceRecord): ObjectKeys {
  return knownKind(record.kind)?.objectKeys(record.address, sentBy(record)) ?? {};
}

/** The id a `moved-from` value names: `old-name`, or `Kind/old-name` of the same kind. */
function fromId(d: Desired, value: string): { readonly id: string } | { readonly error: string } {
  const v = value.trim();
  if (v === "") return { error: `the \`${movedFromAnnotation}\` annotation names no resource` };
  const slash = v.indexOf("/");
  if (slash < 0) return { id: `${d.kind}/${v}` };
  if (v.slice(0, slash) !== d.kind) return { error: `\`${movedFromAnnotation}: ${v}\` names another kind: a resource can only be renamed within its kind` };
  return { id: v };
}

const moveNote = (from: string, how: string): string =>
  `moved from ${from} (${how}): its record — server id, history — is kept under the new name; nothing is sent for the rename itself`;

/**
 * The moves of a plan. `present`: every resource of the repository (a record of one of them is
 * no orphan, and cannot be moved away from it).
 */
export function planMoves(desired: readonly Desired[], state: StateSnapshot, present: ReadonlySet<string>): Moves {
  const orphans = [...state.resources.values()].filter((r) => !present.has(r.id));
  const annotated = desired.filter((d) => d.movedFrom !== undefined);
  const holders = formerHolders(state);
  if (orphans.length === 0 && annotated.length === 0 && holders.size === 0) return noMoves;
  const decisions = new Map<string, MoveDecision>();
  const movedAway = new Set<string>();
  declaredMoves(annotated, state, present, decisions, movedAway);
  // an earlier name coming back before any guess by address or content: the lineage is a proof
  returnMoves(desired, state, present, holders, decisions, movedAway);
  undeclaredMoves(desired, orphans, state, decisions, movedAway);
  return { decisions, movedAway, declaredKeys: declaredKeys(desired, state, orphans.length > 0) };
}

/** The moves the `moved-from` annotations declare: each annotation judged, then each old record claimed by one name only. */
function declaredMoves(
  annotated: readonly Desired[],
  state: StateSnapshot,
  present: ReadonlySet<string>,
  decisions: Map<string, MoveDecision>,
  movedAway: Set<string>,
): void {
  const claimants = new Map<string, string[]>();
  for (const d of annotated) {
    const judged = annotationDecision(d, state, present);
    if ("claims" in judged) claimants.set(judged.claims, [...(claimants.get(judged.claims) ?? []), d.id]);
    else decisions.set(d.id, judged);
  }
  for (const [from, ids] of claimants) {
    if (ids.length > 1) {
      for (const id of ids)
        decisions.set(id, {
          action: "blocked",
          reason: `${ids.join(" and ")} are all declared as moved from ${from}: one record can move to one name`,
          hint: `keep \`${movedFromAnnotation}: ${from.slice(from.indexOf("/") + 1)}\` on one of them`,
        });
      continue;
    }
    decisions.set(ids[0]!, {
      action: "move",
      from: state.resources.get(from)!,
      declared: true,
      note: moveNote(from, `declared by \`${movedFromAnnotation}\``),
    });
    movedAway.add(from);
  }
}

/**
 * What one `moved-from` annotation comes to on its own: refused, a note (nothing to move), or a
 * claim on the old name's record (granted when no other resource claims it too).
 */
function annotationDecision(d: Desired, state: StateSnapshot, present: ReadonlySet<string>): MoveDecision | { readonly claims: string } {
  const from = fromId(d, d.movedFrom!);
  if ("error" in from) {
    return { action: "blocked", reason: from.error, hint: `write the old \`metadata.name\` (\`${movedFromAnnotation}: old-name\`), or remove the annotation` };
  }
  if (from.id === d.id) return { action: "note", note: `\`${movedFromAnnotation}\` names the resource itself: nothing to move` };
  const old = state.resources.get(from.id);
  if (state.resources.has(d.id)) {
    const left =
      old !== undefined && !present.has(from.id)
        ? `; ${from.id} still has a record too: if it is the same object, \`gatesync state resolve ${from.id} --forget\` drops it`
        : "";
    return { action: "note", note: `the move from ${from.id} is recorded already: the annotation can be removed${left}` };
  }
  if (present.has(from.id)) {
    return {
      action: "blocked",
      reason: `\`${movedFromAnnotation}\` names ${from.id}, which the repository still declares: a record moves only from a resource that left it`,
      hint: `remove ${from.id} from the repository (it is being renamed), or remove the annotation`,
    };
  }
  if (old === undefined) {
    return { action: "note", note: `\`${movedFromAnnotation}\`: nothing is recorded under ${from.id}, so nothing moves; the annotation can be removed` };
  }
  return { claims: from.id };
}

/** New resources (no record, no decision yet) that stand for an orphaned record's object. */
function undeclaredMoves(
  desired: readonly Desired[],
  orphans: readonly ResourceRecord[],
  state: StateSnapshot,
  decisions: Map<string, MoveDecision>,
  movedAway: Set<string>,
): void {
  const byKey = new Map<string, ResourceRecord[]>();
  for (const r of orphans) {
    if (movedAway.has(r.id)) continue;
    const keys = recordKeys(r);
    for (const key of [keys.address, keys.content]) if (key !== undefined) byKey.set(key, [...(byKey.get(key) ?? []), r]);
  }
  if (byKey.size === 0) return;
  const matches = new Map<string, { readonly records: ResourceRecord[]; readonly by: "address" | "content" }>();
  const claims = new Map<string, string[]>();
  // only new resources of a kind some orphan has can be one renamed (their compare is read for it)
  const orphanKinds = new Set(orphans.map((r) => r.kind));
  for (const d of desired) {
    if (!orphanKinds.has(d.kind) || state.resources.has(d.id) || decisions.get(d.id)?.action === "move" || decisions.get(d.id)?.action === "blocked") continue;
    const keys = kindModule(d.kind).objectKeys(d.request.address, d.request.readCompare());
    const byAddress = keys.address === undefined ? [] : (byKey.get(keys.address) ?? []);
    const records = byAddress.length > 0 ? byAddress : keys.content === undefined ? [] : (byKey.get(keys.content) ?? []);
    if (records.length === 0) continue;
    matches.set(d.id, { records, by: byAddress.length > 0 ? "address" : "content" });
    for (const r of records) claims.set(r.id, [...(claims.get(r.id) ?? []), d.id]);
  }
  for (const [id, { records, by }] of matches) {
    const names = records.map((r) => r.id).sort();
    const rivals = [...new Set(records.flatMap((r) => claims.get(r.id) ?? []))].sort();
    const name = id.slice(id.indexOf("/") + 1);
    if (by === "address" && records.length === 1 && rivals.length === 1) {
      const key = recordKeys(records[0]!).address!;
      decisions.set(id, {
        action: "move",
        from: records[0]!,
        declared: false,
        note: `${moveNote(records[0]!.id, `the same ${key}: one object under a new name`)}; \`${movedFromAnnotation}: ${records[0]!.name}\` says so in the repository`,
      });
      movedAway.add(records[0]!.id);
      continue;
    }
    const what = by === "address" ? recordKeys(records[0]!).address! : recordKeys(records[0]!).content!;
    const hint =
      names.length === 1
        ? `if ${id} is ${names[0]} renamed, annotate it \`${movedFromAnnotation}: ${records[0]!.name}\`; if the old object is gone from the server, \`gatesync state resolve ${names[0]} --forget\` first`
        : `annotate ${id} \`${movedFromAnnotation}: <old name>\` with the one it replaces, and \`gatesync state resolve … --forget\` the others if they are gone from the server`;
    const others = rivals.length > 1 ? ` (so do ${rivals.filter((r) => r !== id).join(", ")})` : "";
    decisions.set(id, {
      action: "blocked",
      reason: `${names.join(", ")}, gone from the repository, ${names.length === 1 ? "holds" : "hold"} the ${what}${others}: creating ${name} could make a second object — a rename is declared, not guessed`,
      hint,
    });
  }
}

/** The address keys of every object the repository declares (only needed when records are orphaned). */
function declaredKeys(desired: readonly Desired[], state: StateSnapshot, needed: boolean): Map<string, string> {
  const keys = new Map<string, string>();
  if (!needed) return keys;
  for (const d of desired) {
    const address = { ...d.request.address, ...state.resources.get(d.id)?.address };
    // an address key is read from the address alone: no compare is parsed for it
    const key = kindModule(d.kind).objectKeys(address, noCompare).address;
    if (key !== undefined && !keys.has(key)) keys.set(key, d.id);
  }
  return keys;
}

const noCompare: Readonly<Record<string, unknown>> = Object.freeze({});

/** The record of `from` under the desired resource's name. */
export function movedRecord(from: ResourceRecord, d: Desired): ResourceRecord {
  return { ...from, id: d.id, name: d.name };
}

/**
 * An orphaned record whose object the repository still declares under another name (a rename
 * followed before this record was dropped, or left by an apply stopped mid-move): it is never
 * deactivated — that would switch off what the repository declares active.
 */
export function supersededOrphan(record: ResourceRecord, by: string, key: string): Draft {
  return {
    id: record.id,
    kind: record.kind,
    name: record.name,
    action: "orphan",
    fields: [],
    reason: `gone from the repository under this name, but its object (${key}) is declared as ${by}: not deactivated, left as it is`,
    hint: `\`gatesync state resolve ${record.id} --forget\` drops this leftover record (${by} keeps the object)`,
    notes: [],
  };
}

/** The resource that declares the object of an orphaned record, if any, and the key they share. */
export function declaredElsewhere(
  record: ResourceRecord,
  moves: Moves,
  outsideSelection?: ReadonlyMap<string, string>,
): { readonly by: string; readonly key: string } | undefined {
  if (moves.declaredKeys.size === 0 && (outsideSelection?.size ?? 0) === 0) return undefined;
  const key = recordKeys(record).address;
  const by = key === undefined ? undefined : (moves.declaredKeys.get(key) ?? outsideSelection?.get(key));
  return by === undefined || key === undefined ? undefined : { by, key };
}
