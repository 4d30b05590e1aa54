/**
 * Names that come back (docs/user/renames.md, "What comes back"): a desired resource with no
 * record of its own whose name is an earlier name of a record (its rename lineage,
 * record/rename-lineage.ts) stands for that record's object — a rollback, a `git revert` of the
 * rename, an old commit applied again. The record moves back and the object is updated to the
 * desired values (where the kind cannot be updated, the change is blocked saying what stays);
 * it is never created a second time without the operator's word (`state resolve NAME --forget`,
 * which forgets the earlier name). Pure: decided from the desired resources and the state alone.
 */
import { knownKind } from "../../kinds/registry.js";
import { leftAt } from "../../record/lineage/rename-lineage.js";
import type { ResourceRecord, StateSnapshot } from "../../record/state.js";
import type { Desired } from "../desired.js";
import type { Draft } from "../plan-change.js";
import type { MoveDecision } from "./move-decision.js";

const noCompare: Readonly<Record<string, unknown>> = Object.freeze({});

/** The object's address key, read from its address alone (an API's apiId, a webhook's id …). */
const addressKey = (kind: string, address: Readonly<Record<string, string>>): string | undefined => knownKind(kind)?.objectKeys(address, noCompare).address;

/** A desired resource whose own address names another object than the record's is no return of it. */
function mayBe(d: Desired, record: ResourceRecord): boolean {
  const wanted = addressKey(d.kind, d.request.address);
  const held = addressKey(record.kind, record.address);
  return record.kind === d.kind && (wanted === undefined || held === undefined || wanted === held);
}

const blocked = (reason: string, hint: string): MoveDecision => ({ action: "blocked", reason, hint });

/** When and by which commit the record left `id`, as the plan says it. */
function since(record: ResourceRecord, id: string): string {
  const step = leftAt(record, id);
  if (step === undefined) return "";
  return ` on ${step.at.slice(0, 10)}${step.commit === undefined ? "" : ` (commit ${step.commit.slice(0, 12)})`}`;
}

/**
 * The returns of a plan, added to `decisions` (for desired resources no declared move decided)
 * and `movedAway`. `holders`: each earlier name → the records that had it (rename-lineage.ts).
 */
export function returnMoves(
  desired: readonly Desired[],
  state: StateSnapshot,
  present: ReadonlySet<string>,
  holders: ReadonlyMap<string, readonly ResourceRecord[]>,
  decisions: Map<string, MoveDecision>,
  movedAway: Set<string>,
): void {
  if (holders.size === 0) return;
  const found = new Map<string, readonly ResourceRecord[]>();
  const claims = new Map<string, string[]>();
  for (const d of desired) {
    const decided = decisions.get(d.id)?.action;
    if (state.resources.has(d.id) || decided === "move" || decided === "blocked") continue;
    const records = (holders.get(d.id) ?? []).filter((r) => !movedAway.has(r.id) && mayBe(d, r));
    if (records.length === 0) continue;
    found.set(d.id, records);
    for (const r of records) claims.set(r.id, [...(claims.get(r.id) ?? []), d.id]);
  }
  for (const [id, records] of found) decisions.set(id, decide(id, records, claims, present, movedAway));
}

function decide(
  id: string,
  records: readonly ResourceRecord[],
  claims: ReadonlyMap<string, readonly string[]>,
  present: ReadonlySet<string>,
  movedAway: Set<string>,
): MoveDecision {
  const forget = `\`gatesync state resolve ${id} --forget\``;
  if (records.length > 1) {
    const names = records.map((r) => r.id).sort();
    return blocked(
      `${id} is an earlier name of ${names.join(" and ")}: which of their objects it stands for is not known, and creating it could make another`,
      `annotate ${id} \`gatesync.dev/moved-from: <name>\` with the one it is; or ${forget} forgets it as their earlier name (the next apply then creates ${id} as a new object)`,
    );
  }
  const record = records[0]!;
  const rivals = claims.get(record.id) ?? [];
  if (rivals.length > 1)
    return blocked(
      `${rivals.join(" and ")} are all earlier names of ${record.id}: one record comes back to one name`,
      `keep one of them; \`gatesync state resolve <name> --forget\` forgets the others as its earlier names (the next apply creates them as new objects)`,
    );
  if (present.has(record.id))
    return blocked(
      `${id} is an earlier name of ${record.id} (renamed${since(record, id)}), which the repository still declares: creating ${id} would make a second object of the one they both name`,
      `if ${id} is meant as a new, second object, ${forget} forgets it as ${record.id}'s earlier name (the next apply creates it); if it is the same object, keep one of the two`,
    );
  movedAway.add(record.id);
  return {
    action: "move",
    from: record,
    declared: false,
    returned: true,
    note: `${id} comes back: it was renamed ${record.id}${since(record, id)}, whose record moves back — the same object, never a second one; nothing is sent for the move itself`,
  };
}

/** A returned name whose change is blocked (a kind that cannot be updated): what stays as it is. */
export function stayingDraft(draft: Draft, from: string): Draft {
  return {
    ...draft,
    reason: `${draft.reason ?? "blocked"}: the object stays as ${from} left it (the values below are not sent) and no second one is created; its record moves back to this name`,
  };
}
