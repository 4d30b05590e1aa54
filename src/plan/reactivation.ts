/**
 * A revert brings a deactivated object back: a resource whose record says it was deactivated
 * (it left the repository under `orphans: deactivate`) and that the repository declares again
 * is written again so that it is switched on — even when its files are byte for byte what they
 * were (the record's content hash then matches, but the server holds it switched off).
 */
import { knownKind } from "../kinds/registry.js";
import type { RecordHead } from "../record/wrappers/lazy-record.js";
import type { Desired } from "./desired.js";
import type { FieldChange } from "./diff.js";

export interface PlannedReactivation {
  readonly field: FieldChange;
  readonly note: string;
  /** No write built from the spec can switch it on: the change is blocked. */
  readonly refused?: { readonly reason: string; readonly hint: string };
}

/** Undefined when nothing needs switching on (never deactivated, or the spec itself asks for it off). */
export function reactivationOf(d: Desired, record: RecordHead): PlannedReactivation | undefined {
  const deactivation = knownKind(d.kind)?.deactivation;
  if (record.deactivatedAt === undefined || deactivation === undefined) return undefined;
  if (deactivation.reactivation.declaresInactive(d.request.readCompare())) return undefined;
  const on = typeof deactivation.after === "boolean" ? !deactivation.after : undefined;
  const refused = deactivation.reactivation.refusal?.(d.request.readCompare(), { ...d.request.address, ...record.address });
  return {
    ...(refused === undefined ? {} : { refused: { reason: refused.reason, hint: refused.hint.replace("<id>", d.id) } }),
    field: { path: deactivation.field, op: "change", before: deactivation.after, after: on },
    note: `reactivated: it was deactivated on ${record.deactivatedAt} when it left the repository; declared again, it is written so that it is switched on`,
  };
}
