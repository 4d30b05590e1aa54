/**
 * The rename lineage of a record (docs/user/renames.md, "What comes back"): every move of the
 * record from one name to another, old identity → new identity, kept in the record itself. The
 * interfaces cannot read, so when a desired set brings an earlier name back (a rollback, a
 * revert, an old commit applied again), this is how the planner knows that the name's object is
 * the one recorded under the newer name — and moves the record back instead of creating a
 * second object. Kept in the record (the JSON column of both backends: no table changes), it
 * travels with it through moves, dumps, `state move-to-env` and rewrites.
 */
import type { ResourceRecord, StateSnapshot } from "../state.js";
import { commitPattern, maxRenameSteps } from "./rename-step.js";
import type { RenameStep } from "./rename-step.js";

/** The names the record's object had before (its own excluded), newest move first. */
export function formerIds(record: Pick<ResourceRecord, "id" | "renames">): string[] {
  const steps = record.renames ?? [];
  const out: string[] = [];
  for (let i = steps.length - 1; i >= 0; i--) {
    for (const id of [steps[i]!.to, steps[i]!.from]) if (id !== record.id && !out.includes(id)) out.push(id);
  }
  return out;
}

/** When the record last left `id` (the newest step from it), for the words a plan says. */
export function leftAt(record: Pick<ResourceRecord, "renames">, id: string): RenameStep | undefined {
  return [...(record.renames ?? [])].reverse().find((s) => s.from === id);
}

/** Each earlier name → the records that held it (a state without renames: empty, no record copied). */
export function formerHolders(state: StateSnapshot | undefined): ReadonlyMap<string, readonly ResourceRecord[]> {
  const index = new Map<string, ResourceRecord[]>();
  if (state === undefined) return index;
  for (const r of state.resources.values()) {
    if (r.renames === undefined || r.renames.length === 0) continue;
    for (const id of formerIds(r)) index.set(id, [...(index.get(id) ?? []), r]);
  }
  return index;
}

/** The record of `from` under its new name, the move added to its lineage. */
export function renamedRecord(from: ResourceRecord, to: { readonly id: string; readonly name: string }, at: string, commit?: string): ResourceRecord {
  // only a commit id is kept as the commit (what a reader checks the step by: renamesProblem)
  const step: RenameStep = { from: from.id, to: to.id, at, ...(commit === undefined || !commitPattern.test(commit) ? {} : { commit }) };
  const renames = [...(from.renames ?? []), step].slice(-maxRenameSteps);
  return { ...from, id: to.id, name: to.name, renames, updatedAt: at };
}

/** The record without `id` among its earlier names (an operator's `state resolve ID --forget`: a new object under that name is meant). */
export function withoutFormer(record: ResourceRecord, id: string): ResourceRecord {
  const renames = (record.renames ?? []).filter((s) => s.from !== id && s.to !== id);
  const { renames: _dropped, ...rest } = record;
  return renames.length === 0 ? rest : { ...rest, renames };
}
