/**
 * A record whose resource left the repository (an orphan): reported and left alone, or, under
 * `orphans: deactivate`, switched off where its kind can be — a deactivation is breaking (its
 * callers or holders lose access). Whether it is deactivated at all is decided beside it: never
 * for an object the repository still declares (renames.ts), never in a run that would switch
 * off too many (deactivation-guard.ts).
 */
import { aKind, knownKind } from "../kinds/registry.js";
import { containsSensitive } from "../secrets/markers.js";
import { holdsPayload } from "../record/wrappers/lazy-record.js";
import type { ResourceRecord } from "../record/state.js";
import { breaking as breakingChange, compatibilityOf } from "../kinds/breaking/types.js";
import type { FieldChange } from "./diff.js";
import { inDoubtHint } from "./in-doubt.js";
import { hinted, plannedOperation } from "./plan-change.js";
import type { Draft } from "./plan-change.js";

const orphanBase = (record: ResourceRecord): Pick<Draft, "id" | "kind" | "name"> & { fields: FieldChange[] } => ({
  id: record.id,
  kind: record.kind,
  name: record.name,
  fields: [],
});

const keptNote = (record: ResourceRecord): string =>
  "no interface deletes it: it stays on the server, and in the state until `gatesync state resolve " + record.id + " --forget`";

/** An orphan left as it is for what its record says: in doubt, never applied, or deactivated already. Undefined otherwise. */
function reportedForItsRecord(record: ResourceRecord): Draft | undefined {
  const base = orphanBase(record);
  const kept = keptNote(record);
  if (record.status === "in-doubt")
    return {
      ...base,
      action: "orphan",
      reason: `removed from the repository while in doubt; ${kept}`,
      ...hinted(inDoubtHint(record.kind, record.id, "orphan")),
      notes: [],
    };
  if (record.status === "failed" && !holdsPayload(record, "applied")) {
    // every attempt failed with a definite answer (e.g. 404: the API never existed): nothing of it is on the server
    return {
      ...base,
      action: "orphan",
      reason: `removed from the repository; it was never applied (the last attempt failed: ${record.error ?? "unknown error"}), so nothing of it is on the server`,
      hint: `\`gatesync state resolve ${record.id} --forget\` drops its record`,
      notes: [],
    };
  }
  if (record.deactivatedAt !== undefined)
    return { ...base, action: "orphan", reason: `removed from the repository; deactivated on ${record.deactivatedAt}; ${kept}`, notes: [] };
  return undefined;
}

/** A record whose resource left the repository (or the selection's part of it). */
export function planOrphan(record: ResourceRecord, policy: "report" | "deactivate", batching: boolean): Draft {
  const base = orphanBase(record);
  const kept = keptNote(record);
  const reported = reportedForItsRecord(record);
  if (reported !== undefined) return reported;
  const deactivation = knownKind(record.kind)?.deactivation;
  const byHand = "remove it on the server by hand, then forget it";
  if (deactivation === undefined)
    return {
      ...base,
      action: "orphan",
      reason: `removed from the repository; no interface can delete or deactivate ${aKind(record.kind)}; ${kept}`,
      hint: byHand,
      notes: [],
    };
  // only kinds that can be switched off are told about `orphans: deactivate`
  if (policy === "report")
    return {
      ...base,
      action: "orphan",
      reason: `removed from the repository; ${kept}`,
      hint: `set \`orphans: deactivate\` in gatesync.yaml to switch off ${aKind(record.kind)} that leaves the repository (${deactivation.effect}), or ${byHand}`,
      notes: [],
    };
  const applied = record.applied?.read() ?? {};
  if (containsSensitive(applied) || deactivation.body(applied, record.address) === undefined) {
    const refusal = typeof deactivation.refusal === "function" ? deactivation.refusal(applied, record.address) : deactivation.refusal;
    return { ...base, action: "orphan", reason: `removed from the repository; not deactivated: ${refusal.reason}; ${kept}`, hint: refusal.hint, notes: [] };
  }
  const effect = `deactivated (${deactivation.effect}): ${deactivation.loss}`;
  return {
    ...base,
    action: "orphan",
    deactivate: true,
    operation: plannedOperation(deactivation.operation, record.address, deactivation.query(applied), false, batching),
    fields: [{ path: deactivation.field, op: "change", before: deactivation.before(applied), after: deactivation.after }],
    // switching an object off takes it away from everyone using it: as breaking as `is_inactive: true` in a spec
    compatibility: compatibilityOf([breakingChange(deactivation.field, effect)]),
    breaking: [{ path: deactivation.field, reason: effect }],
    reason: `removed from the repository: deactivated (${deactivation.effect})`,
    notes: [deactivation.note?.(applied)].filter((n): n is string => n !== undefined),
  };
}
