/**
 * The apply's side of renames (docs/user/renames.md): before any call, each record that moves is
 * written under its new name, then removed from the old one — in that order, so a process
 * stopped in between leaves the object recorded twice (the plan then keeps the old record
 * from being deactivated and says to forget it), never not at all (a duplicate at the next
 * create). No call: the server's object is the same.
 */
import type { Plan } from "../../plan/plan.js";
import { movesRecord } from "../../plan/plan-change.js";
import { renamedRecord } from "../../record/lineage/rename-lineage.js";
import type { StateBackend, StateSnapshot } from "../../record/state.js";

/** Writes the moves (under the apply's lock) and returns the state the executor builds on. */
export async function recordMoves(plan: Plan, snapshot: StateSnapshot, state: StateBackend, now: string): Promise<StateSnapshot> {
  // a name coming back moves back even when its change is blocked (a kind that cannot be
  // updated): the object is that record's, and the plan's advice (`state resolve --accept`) needs it there
  const moves = plan.changes.filter(movesRecord);
  if (moves.length === 0) return snapshot;
  const resources = new Map(snapshot.resources);
  for (const c of moves) {
    const from = resources.get(c.moved!.from);
    if (from === undefined || resources.has(c.id)) continue;
    // the lineage learns the move: an earlier name declared again comes back to this object
    const record = renamedRecord(from, c, now, plan.commit);
    // one at a time, durably: the new name first
    await state.write(record);
    await state.remove(from.id);
    resources.delete(from.id);
    resources.set(c.id, record);
  }
  return { ...snapshot, resources };
}
