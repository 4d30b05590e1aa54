/**
 * Ownership, checked per resource (docs/user/teams.md): a change that would write an object
 * another owner holds in the ownership registry — a create, an update, an adoption, a rename's
 * write, an orphan's deactivation — is refused for that resource alone (OWNED_ELSEWHERE, naming
 * the owner and its environment); the rest of the plan proceeds. An object owned elsewhere that
 * this plan leaves alone (a no-op, an orphan reported) gets a note, and a reference to another
 * owner's API is said to be one. Pure: the registry's rows come in as data (run/ reads them).
 */
import { allKinds, knownKind } from "../kinds/registry.js";
import type { InterfaceName } from "../contract/interfaces.js";
import type { ResourceRecord, StateSnapshot } from "../record/state.js";
import { keyOf } from "../record/ownership/ownership.js";
import type { Claimant, OwnershipKey, OwnershipRow } from "../record/ownership/ownership.js";
import { recordKeys } from "./names/renames.js";
import type { Desired } from "./desired.js";
import type { PlannedChange } from "./plan-change.js";

/** What the check needs: who plans, where each interface is, and the registry's rows of those targets (by keyOf). */
export interface OwnershipView {
  readonly claimant: Claimant;
  /** Each interface's URL (registryUrl) for this environment. */
  readonly targets: Partial<Readonly<Record<InterfaceName, string>>>;
  readonly rows: ReadonlyMap<string, OwnershipRow>;
  /**
   * Whether another claimant holds an API on the gateway (asked of the registry by a run, which
   * reads only its own objects' rows): without one, no reference can cross owners. Absent: told
   * by `rows`, which then hold the target's every row.
   */
  readonly crossing?: boolean;
  /** The keys `rows` were read at (a run's read: the daemon's skip decision reads them again). */
  readonly keys?: readonly OwnershipKey[];
}

const noCompare: Readonly<Record<string, unknown>> = Object.freeze({});

/** The object a resource's request (or a record) stands for: its content key (a name the server ids by), else its address key. */
export function objectOf(kind: string, address: Readonly<Record<string, string>>, compare: Readonly<Record<string, unknown>>): string | undefined {
  const keys = knownKind(kind)?.objectKeys(address, compare);
  return keys?.content ?? keys?.address;
}

/** The registry key of a desired resource's object on this environment's target, if the target and identity are known. */
export function desiredKey(d: Desired, targets: OwnershipView["targets"]): OwnershipKey | undefined {
  const kind = knownKind(d.kind);
  const url = kind === undefined ? undefined : targets[kind.interface];
  // a kind that names its objects itself (no server id) is known by its address alone: its
  // request's compare is not read (made again from the resource, it would double a plan's time)
  const byAddress = kind?.serverId === undefined ? kind?.objectKeys(d.request.address, noCompare) : undefined;
  const object =
    byAddress?.address !== undefined && byAddress.content === undefined ? byAddress.address : objectOf(d.kind, d.request.address, d.request.readCompare());
  return kind === undefined || url === undefined || object === undefined ? undefined : { interface: kind.interface, url, object };
}

function recordKey(record: ResourceRecord, targets: OwnershipView["targets"]): OwnershipKey | undefined {
  const kind = knownKind(record.kind);
  const url = kind === undefined ? undefined : targets[kind.interface];
  const keys = recordKeys(record);
  const object = keys.content ?? keys.address;
  return kind === undefined || url === undefined || object === undefined ? undefined : { interface: kind.interface, url, object };
}

/** Whether the row is another claimant's (another owner, or the same owner's other environment). */
export const isElsewhere = (row: OwnershipRow, me: Claimant): boolean => row.owner !== me.owner || row.environment !== me.environment;

/** The refusal's text: `OWNED_ELSEWHERE: OrgKey/acme (org-key:acme on gateway https://…) is owned by team payments (environment payments-prod)`. */
export function ownedElsewhere(id: string, row: OwnershipRow): string {
  return `OWNED_ELSEWHERE: ${ownedText(id, row)}`;
}

/** `OrgKey/acme (org-key:acme on gateway https://…) is owned by team payments (environment payments-prod)`. */
export const ownedText = (id: string, row: OwnershipRow): string =>
  `${id} (${row.object} on ${row.interface} ${row.url}) is owned by team ${row.owner} (environment ${row.environment})`;

/** The hint of a refusal: the owner's to change, or the operator's to hand over. */
export const ownedHint = (row: OwnershipRow): string =>
  `leave it to team ${row.owner} (its repository changes it), or have the operator hand it over (gatesync ownership transfer: docs/user/teams.md)`;

/** Whether a change writes its object (what another owner's row refuses). */
export const writes = (d: PlannedChange): boolean =>
  d.action === "create" || d.action === "update" || d.action === "adopt" || (d.action === "moved" && d.operation !== undefined) || d.deactivate === true;

/** The change refused (a declared resource: blocked; an orphan: reported, never deactivated). */
export function refuseOwned(d: PlannedChange, row: OwnershipRow): PlannedChange {
  const { operation: _op, quotaReset: _q, deactivate: _d, reactivate: _r, ...rest } = d;
  const ownedBy = { owner: row.owner, environment: row.environment };
  const reason = ownedElsewhere(d.id, row);
  if (d.action === "orphan") return { ...rest, action: "orphan", ownedBy, reason, notes: [...d.notes, `never deactivated here: ${reason}`] };
  return { ...rest, action: "blocked", fields: [], ownedBy, reason, hint: ownedHint(row) };
}

/** The kind that provides API ids (the gateway's API definitions): what a reference by API id names. */
const apiKind = allKinds().find((k) => k.providedApiId !== undefined);

/** The API ids a request names without writing them: its address's (an OAuth client's), and those its kind lists in its compare (KindModule.referencedApiIds). */
function referencedApiIds(d: Desired): string[] {
  const ids = new Set<string>();
  const own = d.request.address.apiID;
  if (own !== undefined) ids.add(own);
  // the compare is read only for the kinds that list APIs in it (made again, it costs a plan's time)
  const kind = knownKind(d.kind);
  if (kind?.referencedApiIds !== undefined) for (const id of kind.referencedApiIds(d.request.readCompare())) ids.add(id);
  return [...ids];
}

/**
 * The keys a run's check looks up (changeKey): each declared resource's object and each record's
 * (an orphan, a rename's old name): the rows a run reads are these, O(the environment's objects).
 */
export function checkedKeys(desired: Iterable<Desired>, state: StateSnapshot, targets: OwnershipView["targets"]): OwnershipKey[] {
  const keys: OwnershipKey[] = [];
  const declared = new Set<string>();
  for (const d of desired) {
    declared.add(d.id);
    const k = desiredKey(d, targets);
    if (k !== undefined) keys.push(k);
  }
  // a record is looked up by its own key only where nothing declares its id (changeKey), and only those records' payloads are sure to be read
  for (const r of state.resources.values()) {
    const k = declared.has(r.id) ? undefined : recordKey(r, targets);
    if (k !== undefined) keys.push(k);
  }
  return keys;
}

/** The keys of the APIs declared resources reference (referenceNotes), read only when another claimant holds an API. */
export function referencedApiKeys(desired: Iterable<Desired>, targets: OwnershipView["targets"]): OwnershipKey[] {
  const url = apiKind === undefined ? undefined : targets[apiKind.interface];
  if (apiKind === undefined || url === undefined) return [];
  const keys: OwnershipKey[] = [];
  for (const d of desired) {
    if (d.kind === apiKind.kind) continue;
    for (const apiId of referencedApiIds(d)) {
      const object = apiKind.objectKeys({ apiID: apiId }, noCompare).address;
      if (object !== undefined) keys.push({ interface: apiKind.interface, url, object });
    }
  }
  return keys;
}

/** The gateway's target, where APIs live, and the prefix of their objects (`api:…`): what `crossing` asks of the registry. */
export function apiTarget(targets: OwnershipView["targets"]): { readonly interface: string; readonly url: string; readonly kind: string } | undefined {
  const url = apiKind === undefined ? undefined : targets[apiKind.interface];
  return apiKind === undefined || url === undefined ? undefined : { interface: apiKind.interface, url, kind: "api" };
}

/** Whether another claimant holds any API on the gateway: without one, no reference can cross owners (nothing more is read). */
function foreignApis(view: OwnershipView): boolean {
  if (view.crossing !== undefined) return view.crossing;
  const url = apiKind === undefined ? undefined : view.targets[apiKind.interface];
  for (const row of view.rows.values())
    if (row.interface === apiKind?.interface && row.url === url && row.object.startsWith("api:") && isElsewhere(row, view.claimant)) return true;
  return false;
}

/**
 * The APIs another owner holds that a declared resource references (an OAuth client of it, a
 * product listing it, an org key granting access to it): allowed, nothing of them is written;
 * each said (`references ApiDefinition/pay (api:pay-api), owned by team payments …`).
 */
function referenceNotes(d: Desired, view: OwnershipView): string[] {
  if (apiKind === undefined || d.kind === apiKind.kind) return [];
  const url = view.targets[apiKind.interface];
  if (url === undefined) return [];
  const notes: string[] = [];
  for (const apiId of referencedApiIds(d)) {
    const object = apiKind.objectKeys({ apiID: apiId }, noCompare).address;
    const row = object === undefined ? undefined : view.rows.get(keyOf({ interface: apiKind.interface, url, object }));
    if (row === undefined || !isElsewhere(row, view.claimant)) continue;
    notes.push(
      `references ${row.resource} (${row.object}), owned by team ${row.owner} (environment ${row.environment}): a reference across owners, allowed (nothing of it is written)`,
    );
  }
  return notes;
}

/**
 * Each change checked against the registry: `desired` by id (a declared resource's object),
 * `state` (an orphan's record). O(changes), one map lookup each. `recheck`: the apply's check
 * under the state lock, which refuses and notes nothing else (the plan's notes are there already).
 */
export function checkOwnership(
  changes: readonly PlannedChange[],
  desired: ReadonlyMap<string, Desired>,
  state: StateSnapshot,
  view: OwnershipView,
  recheck = false,
): PlannedChange[] {
  const crossing = !recheck && foreignApis(view);
  return changes.map((c) => {
    const row = rowFor(c.id, desired, state, view);
    if (row !== undefined && isElsewhere(row, view.claimant)) {
      if (writes(c)) return refuseOwned(c, row);
      if (recheck || c.ownedBy !== undefined) return c;
      return { ...c, ownedBy: { owner: row.owner, environment: row.environment }, notes: [...c.notes, `${ownedText(c.id, row)}: not managed here`] };
    }
    const d = desired.get(c.id);
    const notes = d === undefined || recheck || !crossing ? [] : referenceNotes(d, view);
    return notes.length === 0 ? c : { ...c, notes: [...c.notes, ...notes] };
  });
}

/** The registry key of a change's object: its declared resource's, or its record's (an orphan). */
export function changeKey(
  id: string,
  desired: ReadonlyMap<string, Desired>,
  state: StateSnapshot,
  targets: OwnershipView["targets"],
): OwnershipKey | undefined {
  const d = desired.get(id);
  if (d !== undefined) return desiredKey(d, targets);
  const record = state.resources.get(id);
  return record === undefined ? undefined : recordKey(record, targets);
}

function rowFor(id: string, desired: ReadonlyMap<string, Desired>, state: StateSnapshot, view: OwnershipView): OwnershipRow | undefined {
  const key = changeKey(id, desired, state, view.targets);
  return key === undefined ? undefined : view.rows.get(keyOf(key));
}
