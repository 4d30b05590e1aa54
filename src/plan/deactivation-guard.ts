/**
 * The guard against mass deactivation: a run that would switch off every API definition and
 * org key gatesync has applied, or more than a configured share of them, switches off none —
 * an emptied repository (a bad merge, `git rm -r` in the wrong directory, a branch reset) looks
 * exactly like that. Each withheld deactivation is blocked, saying how to allow it: the
 * `--allow-mass-deactivation` flag of one-shot commands, or `deactivationGuard` in gatesync.yaml
 * (`allowCommit`: for the runs of one commit; `allow`: always) for the daemon.
 */
import type { DeactivationGuard } from "../config/config.js";
import { knownKind } from "../kinds/registry.js";
import type { ResourceRecord, StateSnapshot } from "../record/state.js";
import type { PlannedChange } from "./plan-change.js";

export type { DeactivationGuard };

/** What the guard withheld, for the plan's header. */
export interface MassDeactivation {
  readonly withheld: number;
  /** Records gatesync applied and could switch off, not switched off yet. */
  readonly of: number;
  readonly maxShare: number;
}

const deactivatable = (r: ResourceRecord): boolean => knownKind(r.kind)?.deactivation !== undefined && r.status === "applied" && r.deactivatedAt === undefined;

function lifted(guard: DeactivationGuard, commit: string | undefined): boolean {
  if (guard.allow) return true;
  const allowed = guard.allowCommit?.trim();
  return allowed !== undefined && allowed.length >= 7 && commit !== undefined && commit.startsWith(allowed);
}

/** The changes with every deactivation withheld when the run would switch off too many. */
export function guardDeactivations(
  changes: PlannedChange[],
  state: StateSnapshot,
  guard: DeactivationGuard | undefined,
  commit: string | undefined,
): { readonly changes: PlannedChange[]; readonly massDeactivation?: MassDeactivation } {
  const planned = changes.filter((c) => c.deactivate === true).length;
  if (planned === 0 || guard === undefined || lifted(guard, commit)) return { changes };
  // of the whole state, a selection's or not: a selective run that switches off its one key is no emptied repository
  let of = 0;
  for (const r of state.resources.values()) if (deactivatable(r)) of++;
  if (planned < of && planned / of <= guard.maxShare) return { changes };
  const pct = `${Math.round(guard.maxShare * 100)}%`;
  const why =
    planned >= of
      ? `every one of the ${of} API definitions and org keys gatesync applied`
      : `${planned} of the ${of} API definitions and org keys gatesync applied (more than ${pct})`;
  const withheld = changes.map((c): PlannedChange => {
    if (c.deactivate !== true) return c;
    const { operation: _o, deactivate: _d, compatibility: _c, breaking: _b, ...rest } = c;
    return {
      ...rest,
      action: "blocked",
      fields: [],
      reason: `not deactivated: this run would switch off ${why} — a repository emptied by mistake looks the same, so it switches off none`,
      hint: "if it is meant: `--allow-mass-deactivation` (plan, apply, run --once), or for the daemon `deactivationGuard: { allowCommit: <this commit> }` in gatesync.yaml; if not, restore the files",
    };
  });
  return { changes: withheld, massDeactivation: { withheld: planned, of, maxShare: guard.maxShare } };
}
