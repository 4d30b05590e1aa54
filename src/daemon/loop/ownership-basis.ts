/**
 * The ownership registry's part of the daemon's skip decision (run-basis.ts): a run is skipped
 * as "nothing changed" only while the registry's rows that concern the environment are what the
 * last good run planned against — the rows of its own claimant, and those of every owner that
 * run was refused by (a plan's `ownedBy`). A `gatesync ownership transfer` to or from it, or a
 * `release` by an owner it was refused by, is planned at the next run, with no restart; another
 * team's claim of an object this environment never declared is not.
 */
import { createHash } from "node:crypto";
import { claimantOf } from "../../config/environments.js";
import type { GatesyncConfig } from "../../config/config.js";
import type { Plan } from "../../plan/plan.js";
import { keyOf } from "../../record/ownership/ownership.js";
import type { OwnershipRegistry, OwnershipRow } from "../../record/ownership/ownership.js";
import { ownershipTargets } from "../../run/ownership-stages.js";

/** The owners (`owner environment`) whose rows a run's skip decision watches. */
export type WatchedOwners = ReadonlySet<string>;

const ownerKey = (o: { readonly owner: string; readonly environment: string }): string => `${o.owner} ${o.environment}`;

/** The registry's rows of the config's targets (read before a run plans: a change during the run is met by the next one). */
export function registryRows(config: GatesyncConfig, registry: OwnershipRegistry): Promise<OwnershipRow[]> {
  return registry.rowsOf(Object.entries(ownershipTargets(config)).map(([i, url]) => ({ interface: i, url })));
}

/** The environment's own claimant and every owner the plan was refused by. */
export function watchedOwners(config: GatesyncConfig, plan: Plan): WatchedOwners {
  const out = new Set([ownerKey(claimantOf(config))]);
  for (const c of plan.changes) if (c.ownedBy !== undefined) out.add(ownerKey(c.ownedBy));
  return out;
}

/** A digest of the rows of the watched owners. */
export function ownershipDigest(rows: readonly OwnershipRow[], watched: WatchedOwners): string {
  const lines = rows.filter((r) => watched.has(ownerKey(r))).map((r) => `${keyOf(r)} ${ownerKey(r)}`);
  return createHash("sha256").update(lines.sort().join("\n")).digest("hex");
}

/**
 * What a good run leaves in its basis: the digest of the rows read before it and of those its
 * own apply claimed (else the next tick would plan again for its own claims), of the owners its
 * plan watches (none without rows).
 */
export function ownershipBasis(
  rows: readonly OwnershipRow[] | undefined,
  config: GatesyncConfig,
  run: { readonly plan: Plan; readonly claimed?: readonly OwnershipRow[] },
): { readonly ownership?: string; readonly watched?: WatchedOwners } {
  if (rows === undefined) return {};
  const watched = watchedOwners(config, run.plan);
  return { ownership: ownershipDigest([...rows, ...(run.claimed ?? [])], watched), watched };
}
