/**
 * What a rollback cannot undo through the interfaces (docs/user/promotion.md, "Rolling back"),
 * said before it starts, resource by resource: an object not declared at the revision (never
 * deleted: it stays, reported as an orphan, or is deactivated), a quota reset, and a name that
 * comes back to an object its kind cannot update (it keeps the values it has). A name that comes
 * back to an object that can be updated is no such thing: its record moves back and the object
 * gets the revision's values — one object, as before the rename.
 */
import { fieldChanges } from "../plan/plan-change.js";
import type { PlannedChange } from "../plan/plan-change.js";
import type { Plan } from "../plan/plan.js";
import { shortRevision } from "./gates.js";
import { formerIds } from "../record/lineage/rename-lineage.js";
import type { StateSnapshot } from "../record/state.js";

function orphanLine(c: PlannedChange, state: StateSnapshot, revision: string): string {
  const fate = c.deactivate === true ? "it is deactivated" : "it stays, reported as an orphan";
  const record = state.resources.get(c.id);
  const formers = record === undefined ? [] : formerIds(record);
  if (formers.length > 0)
    return `${c.id} (before: ${formers.join(", ")}) is declared at ${shortRevision(revision)} under none of its names: the rollback does not delete it (${fate})`;
  return `${c.id} was created after ${shortRevision(revision)}: the rollback does not delete it (${fate})`;
}

/** The lines of a rollback to `revision` planned as `plan` against `state`. */
export function cannotUndo(plan: Plan, state: StateSnapshot, revision: string): string[] {
  return plan.changes.flatMap((c) => {
    if (c.action === "orphan") return [orphanLine(c, state, revision)];
    const lines: string[] = [];
    if (c.action === "blocked" && c.moved?.returned === true) {
      const fields = fieldChanges(c).map((f) => f.path);
      lines.push(
        `${c.id} comes back as the object ${c.moved.from} names, which cannot be updated: it keeps the values ${c.moved.from} gave it${fields.length === 0 ? "" : ` (${fields.join(", ")})`}; its record moves back and no second one is created`,
      );
    }
    if (c.quotaReset === true) lines.push(`${c.id}: its quota is reset; the usage counted so far does not come back`);
    return lines;
  });
}
