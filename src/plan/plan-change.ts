/**
 * A planned change: its action (create, update, no-op, adopt, blocked, orphan, moved), the call
 * it makes, addressed, and what it does to the object's fields. decide-change.ts decides a
 * declared resource's, orphan.ts a record's whose resource left; `plan.ts` assembles them.
 */
import { operations, queryString } from "../contract/operations.js";
import type { OperationName } from "../contract/operations.js";
import type { Deferred } from "../deferred.js";
import type { InterfaceName } from "../contract/interfaces.js";
import type { BreakingChange, Compatibility } from "../kinds/breaking/types.js";
import { isSensitiveMarker } from "../secrets/markers.js";
import type { Desired } from "./desired.js";
import type { NotCompared } from "./not-compared.js";
import { addedFields } from "./diff.js";
import type { FieldChange } from "./diff.js";

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
  readonly moved?: {
    readonly from: string;
    readonly declared: boolean;
    /** The name comes back: it is an earlier name of `from`'s record (its rename lineage), which moves back. */
    readonly returned?: true;
  };
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
  /** The object is another claimant's in the ownership registry (ownership-check.ts): a write of it is refused (OWNED_ELSEWHERE). */
  readonly ownedBy?: { readonly owner: string; readonly environment: string };
  readonly notes: readonly string[];
  /** Sensitive fields holding SOPS values this plan could not decrypt (not-compared.ts). */
  readonly notCompared?: readonly NotCompared[];
  readonly source?: { readonly file: string; readonly line: number };
}

/** A change before the planner assigns its wave. */
export type Draft = Omit<PlannedChange, "wave">;

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

/**
 * Whether the apply moves a record for this change (record-moves.ts): a rename that is not
 * blocked, or an earlier name coming back — blocked or not, its record moves back (no call).
 */
export const movesRecord = (c: Pick<PlannedChange, "moved" | "action">): boolean =>
  c.moved !== undefined && (c.action !== "blocked" || c.moved.returned === true);
