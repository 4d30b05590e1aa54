/**
 * What a successful run of the daemon applied from, and so when a later run may be skipped as
 * "nothing changed": only while the revision, the settings (the config's hash) and the state's
 * version are all what that run left. The state is part of it because the daemon owns what it
 * records: another writer — `gatesync apply` from a laptop against the same SQLite file or
 * PostgreSQL schema, a `state push` — changes what the servers hold, and the next run must plan
 * and re-assert the revision's values, not report `synced` over them (issue 43).
 */
import type { StateBackend, StateVersion } from "../record/state.js";

export interface RunBasis {
  readonly revision: string;
  readonly configHash: string;
  /** The team's settings the commit carries (repository-settings.ts): values, patches, rules, selector. */
  readonly teamHash: string;
  /** The state's lineage and serial once the run's last write was done (read under its lock). */
  readonly state: StateVersion;
}

/** Why a run cannot be skipped: what differs from the last good run's basis; undefined when nothing does. */
export type BasisChange = "revision" | "settings" | "state" | undefined;

/**
 * What changed since `last` (the revision and settings first: they need no read). The state's
 * version is read without its records; one that cannot be read counts as changed (the run then
 * meets the error and reports it).
 */
export async function changeSince(last: RunBasis, now: Omit<RunBasis, "state">, state: StateBackend): Promise<BasisChange> {
  if (last.revision !== now.revision) return "revision";
  if (last.configHash !== now.configHash || last.teamHash !== now.teamHash) return "settings";
  const version = await state.readVersion().catch(() => undefined);
  return version?.lineage === last.state.lineage && version.serial === last.state.serial ? undefined : "state";
}
