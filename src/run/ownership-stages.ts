/**
 * The run's two ownership stages (docs/user/teams.md), around the pure check of
 * plan/ownership-check.ts: `readOwnership` reads the registry's rows of this environment's
 * objects as data for the planner; `claimOwnership`, under an apply's state lock, reads them
 * again, refuses what another owner holds by now, and claims every object the plan declares
 * that has no owner yet, before any call — in one transaction with the records that claim them,
 * so two owners racing for one new object end with one owner, the loser's change refused before
 * any call, and a claim never stands without its record.
 */
import { claimantOf } from "../config/environments.js";
import type { GatesyncConfig } from "../config/config.js";
import type { InterfaceName } from "../contract/interfaces.js";
import { interfaceNames } from "../contract/interfaces.js";
import { keyOf, registryUrl } from "../record/ownership/ownership.js";
import { wonRecords } from "../record/ownership/claimed-records.js";
import type { OwnershipKey, OwnershipRegistry, OwnershipRow } from "../record/ownership/ownership.js";
import type { ClaimedRecord, ResourceRecord, StateBackend, StateSnapshot } from "../record/state.js";
import type { Desired } from "../plan/desired.js";
import { apiTarget, changeKey, checkOwnership, checkedKeys, isElsewhere, referencedApiKeys, writes } from "../plan/ownership-check.js";
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

/** The registry's rows at `keys`, as the check looks them up. */
async function viewAt(config: GatesyncConfig, registry: OwnershipRegistry, targets: OwnershipView["targets"], keys: OwnershipKey[]): Promise<OwnershipView> {
  const rows = await registry.rowsAt(keys);
  return { claimant: claimantOf(config), targets, rows: new Map(rows.map((r) => [keyOf(r), r])), keys };
}

/**
 * The registry's rows of this environment's objects (none read without a registry: no check):
 * its declared and recorded objects', and — when another claimant holds an API on the gateway
 * (one boolean asked first) — the APIs its resources reference. Only keyed reads: a run's cost is
 * its own objects', whatever the size of the registry a fleet shares.
 */
export async function readOwnership(input: PlanRunInput, desired: readonly Desired[], state: StateSnapshot): Promise<OwnershipView | undefined> {
  const registry = input.ownership;
  if (registry === undefined) return undefined;
  const targets = ownershipTargets(input.config);
  const apis = apiTarget(targets);
  const crossing = apis !== undefined && (await registry.othersHold(apis, apis.kind, claimantOf(input.config)));
  const keys = [...checkedKeys(desired, state, targets), ...(crossing ? referencedApiKeys(desired, targets) : [])];
  return { ...(await viewAt(input.config, registry, targets, keys)), crossing };
}

/** A declared change whose object the apply claims: anything but a refusal (a no-op too: an object from before the registry is claimed by its first apply). */
const claims = (c: PlannedChange): boolean => c.action !== "blocked" && c.action !== "orphan" && c.ownedBy === undefined;

/**
 * The record an apply writes with its claim of `c`'s object: the object's record as it stands
 * (under its old name for a rename), else its first record — failed, never applied, as a create
 * that did not get through leaves it — which the apply's calls then replace.
 */
function claimingRecord(c: PlannedChange, run: PlanRun, now: string): { record: ResourceRecord; first: boolean } {
  const held = run.state.resources.get(c.id) ?? (c.moved === undefined ? undefined : run.state.resources.get(c.moved.from));
  if (held !== undefined) return { record: held, first: false };
  const address = run.desired.find(c.id)?.request.address ?? {};
  const error = "claimed by an apply that has not sent it yet";
  return { record: { id: c.id, kind: c.kind, name: c.name, address, status: "failed", error, createdAt: now, updatedAt: now }, first: true };
}

/**
 * Under the lock, before any call: the plan checked against the registry as it is now, then
 * every unowned object it declares claimed, each claim in the same transaction as the record
 * that claims it (StateBackend.writeClaiming; `state`: the apply's labelling state); a claim lost
 * to another claimant writes no record and refuses its change. The run comes back with the
 * refused changes (its plan's summary and digest made again) and the first records written.
 */
export async function claimOwnership(input: PlanRunInput, run: PlanRun, state: StateBackend): Promise<PlanRun> {
  const registry = input.ownership;
  if (registry === undefined || settledAtPlan(run)) return run;
  const targets = ownershipTargets(input.config);
  const view = await viewAt(input.config, registry, targets, checkedKeys(run.desired.desired, run.state, targets));
  const desired = new Map<string, Desired>(run.desired.desired.map((d) => [d.id, d]));
  const checked = checkOwnership(run.plan.changes, desired, run.state, view, true);
  const now = (input.now ?? (() => new Date()))().toISOString();
  const entries: Array<ClaimedRecord & { first: boolean }> = [];
  for (const c of checked) {
    const key = claims(c) ? changeKey(c.id, desired, run.state, view.targets) : undefined;
    if (key !== undefined && !view.rows.has(keyOf(key))) entries.push({ claim: { ...key, ...view.claimant, resource: c.id }, ...claimingRecord(c, run, now) });
  }
  const rows = entries.length === 0 ? [] : await claimWithRecords(state, run, entries, now);
  const lost = new Map<string, OwnershipRow>();
  for (const row of rows) if (isElsewhere(row, view.claimant)) lost.set(keyOf(row), row);
  // a claim lost to another claimant: its write refused as the plan's check would have
  const changes = lost.size === 0 ? checked : checkOwnership(checked, desired, run.state, { ...view, rows: lost }, true);
  const firsts = wonRecords(
    entries.filter((e) => e.first),
    rows,
  );
  const resources = firsts.length === 0 ? run.state.resources : new Map([...run.state.resources, ...firsts.map((r) => [r.id, r] as const)]);
  const same = changes.every((c, i) => c === run.plan.changes[i]);
  const claimed = rows.filter((row) => !isElsewhere(row, view.claimant));
  return { ...run, ...(same ? {} : { plan: withChanges(run.plan, changes) }), state: { ...run.state, resources }, claimed };
}

/**
 * A plan that writes nothing and whose every object was this claimant's when it was read: the
 * read under the lock could refuse nothing (nothing is sent) and claim nothing (all are claimed),
 * so a run that finds nothing to do costs no read of the registry more.
 */
function settledAtPlan(run: PlanRun): boolean {
  const read = run.ownershipRead;
  if (read === undefined || run.plan.changes.some(writes)) return false;
  const desired = new Map<string, Desired>(run.desired.desired.map((d) => [d.id, d]));
  return run.plan.changes.every((c) => {
    const key = claims(c) ? changeKey(c.id, desired, run.state, read.targets) : undefined;
    const row = key === undefined ? undefined : read.rows.get(keyOf(key));
    return key === undefined || (row !== undefined && !isElsewhere(row, read.claimant));
  });
}

/** The claims and their records, one transaction; a new state gets its lineage (and hash key) first, as before any record. */
async function claimWithRecords(state: StateBackend, run: PlanRun, entries: readonly ClaimedRecord[], now: string): Promise<OwnershipRow[]> {
  if (run.state.serial === 0) await state.initialise(run.hashKey.store);
  return state.writeClaiming(entries, now);
}
