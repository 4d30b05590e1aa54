/**
 * The run's two ownership stages (docs/user/teams.md), around the pure check of
 * plan/ownership-check.ts: `readOwnership` reads the registry's rows of this environment's
 * targets as data for the planner; `claimOwnership`, under an apply's state lock, reads them
 * again, refuses what another owner holds by now, and claims every object the plan declares
 * that has no owner yet — one registry transaction, so two owners racing for one new object end
 * with one owner, and the loser's change is refused before any call.
 */
import { claimantOf } from "../config/environments.js";
import type { GatesyncConfig } from "../config/config.js";
import type { InterfaceName } from "../contract/interfaces.js";
import { interfaceNames } from "../contract/interfaces.js";
import { keyOf, registryUrl } from "../record/ownership/ownership.js";
import type { OwnershipClaim, OwnershipRegistry, OwnershipRow } from "../record/ownership/ownership.js";
import type { Desired } from "../plan/desired.js";
import { changeKey, checkOwnership, isElsewhere } from "../plan/ownership-check.js";
import type { OwnershipView } from "../plan/ownership-check.js";
import type { PlannedChange } from "../plan/plan-change.js";
import { withChanges } from "../plan/plan.js";
import type { PlanRun, PlanRunInput } from "./run-types.js";

/** Each interface's URL this config targets, as the registry compares it. */
export function ownershipTargets(config: GatesyncConfig): OwnershipView["targets"] {
  const out: Partial<Record<InterfaceName, string>> = {};
  for (const name of interfaceNames()) {
    const url = config.targets[name]?.url;
    if (url !== undefined) out[name] = registryUrl(url);
  }
  return out;
}

async function viewOf(config: GatesyncConfig, registry: OwnershipRegistry): Promise<OwnershipView> {
  const targets = ownershipTargets(config);
  const rows = await registry.rowsOf(Object.entries(targets).map(([i, url]) => ({ interface: i, url })));
  return { claimant: claimantOf(config), targets, rows: new Map(rows.map((r) => [keyOf(r), r])) };
}

/** The registry's rows of this environment's targets (none read without a registry: no check). */
export async function readOwnership(input: PlanRunInput): Promise<OwnershipView | undefined> {
  return input.ownership === undefined ? undefined : viewOf(input.config, input.ownership);
}

/** A declared change whose object the apply claims: anything but a refusal (a no-op too: an object from before the registry is claimed by its first apply). */
const claims = (c: PlannedChange): boolean => c.action !== "blocked" && c.action !== "orphan" && c.ownedBy === undefined;

/**
 * Under the lock: the plan checked against the registry as it is now, then every unowned
 * object it declares claimed; a claim lost to another claimant refuses its change. The plan
 * comes back with the refused changes (its summary and digest made again), or as it was.
 */
export async function claimOwnership(input: PlanRunInput, run: PlanRun): Promise<PlanRun> {
  const registry = input.ownership;
  if (registry === undefined) return run;
  const view = await viewOf(input.config, registry);
  const desired = new Map<string, Desired>(run.desired.desired.map((d) => [d.id, d]));
  const checked = checkOwnership(run.plan.changes, desired, run.state, view, true);
  const wanted: OwnershipClaim[] = [];
  for (const c of checked) {
    const key = claims(c) ? changeKey(c.id, desired, run.state, view.targets) : undefined;
    if (key !== undefined && !view.rows.has(keyOf(key))) wanted.push({ ...key, ...view.claimant, resource: c.id });
  }
  const now = (input.now ?? (() => new Date()))().toISOString();
  const lost = new Map<string, OwnershipRow>();
  for (const row of await registry.claim(wanted, now)) if (isElsewhere(row, view.claimant)) lost.set(keyOf(row), row);
  // a claim lost to another claimant: its write refused as the plan's check would have
  const changes = lost.size === 0 ? checked : checkOwnership(checked, desired, run.state, { ...view, rows: lost }, true);
  const same = changes.every((c, i) => c === run.plan.changes[i]);
  return same ? run : { ...run, plan: withChanges(run.plan, changes) };
}
