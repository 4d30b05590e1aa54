/**
 * What a successful run of the daemon applied from, and so when a later run may be skipped as
 * "nothing changed": only while the revision, the settings (the config's hash) and the state's
 * version are all what that run left. The state is part of it because the daemon owns what it
 * records: another writer — `gatesync apply` from a laptop against the same SQLite file or
 * PostgreSQL schema, a `state push` — changes what the servers hold, and the next run must plan
 * and re-assert the revision's values, not report `synced` over them (issue 43).
 */
import type { Logger } from "../../logger.js";
import type { StateBackend, StateVersion } from "../../record/state.js";
import type { WatchedKeys } from "./ownership-basis.js";

export interface RunBasis {
  readonly revision: string;
  readonly configHash: string;
  /** The team's settings the commit carries (repository-settings.ts): values, patches, rules, selector. */
  readonly teamHash: string;
  /** The state's lineage and serial once the run's last write was done (read under its lock). */
  readonly state: StateVersion;
  /**
   * The digest of the ownership registry's rows of the objects the run checked, as it read them
   * before it planned, and their keys (ownership-basis.ts): a transfer or a release since — the
   * operator's, in another process — is planned at the next run.
   */
  readonly ownership?: string;
  readonly watched?: WatchedKeys;
}

/** Why a run cannot be skipped: what differs from the last good run's basis; undefined when nothing does. */
export type BasisChange = "revision" | "settings" | "state" | "ownership" | undefined;

/**
 * What changed since `last` (the revision and settings first: they need no read). The state's
 * version is read without its records; one that cannot be read counts as changed (the run then
 * meets the error and reports it).
 */
export async function changeSince(
  last: RunBasis,
  now: Omit<RunBasis, "state" | "ownership" | "watched">,
  state: StateBackend,
  ownership?: () => Promise<string | undefined>,
): Promise<BasisChange> {
  if (last.revision !== now.revision) return "revision";
  if (last.configHash !== now.configHash || last.teamHash !== now.teamHash) return "settings";
  const version = await state.readVersion().catch(() => undefined);
  if (version?.lineage !== last.state.lineage || version.serial !== last.state.serial) return "state";
  // a registry that cannot be read counts as changed (the run then meets the error and reports it)
  const owners = ownership === undefined ? undefined : await ownership().catch(() => "unreadable");
  return owners === last.ownership ? undefined : "ownership";
}

/** What the daemon remembers of its last runs, for the skip decision. */
export interface RunMemory {
  readonly lastGood: RunBasis | undefined;
  /** The revision of the last run that found the repository invalid, while it is the newest. */
  readonly lastInvalid: string | undefined;
  readonly failures: number;
  readonly configHash: string;
  readonly state: StateBackend;
  /** The ownership registry's version of the environment's targets (absent: no registry). */
  readonly ownership?: () => Promise<string | undefined>;
}

/**
 * Whether a run ends before planning: "noop" when nothing changed since the last good run,
 * "invalid" for the same broken revision again (its errors are already reported); a change found
 * marks the daemon not synced until the run applies it (`notSynced`).
 */
export async function skippedRun(
  memory: RunMemory,
  run: { readonly revision: string; readonly teamHash: string; readonly reason: string; readonly reassert: boolean },
  tell: { readonly log: Logger; readonly notSynced: () => void },
): Promise<"noop" | "invalid" | undefined> {
  const good = memory.lastGood;
  // a soak's end re-runs the revision's checks before it is verified (promotion.md): never skipped
  const forced = run.reason === "sync" || run.reason === "soak";
  if (good !== undefined && !run.reassert && memory.failures === 0 && !forced) {
    const change = await changeSince(good, { revision: run.revision, configHash: memory.configHash, teamHash: run.teamHash }, memory.state, memory.ownership);
    if (change === undefined) {
      tell.log.debug({ reason: run.reason }, "nothing changed since the last successful run");
      return "noop";
    }
    // not synced until this run applies what changed (another writer's values may be on the servers)
    tell.notSynced();
    if (change === "state")
      tell.log.info({ reason: run.reason, serial: good.state.serial }, "the state was written by another process since the last run: planning again");
    if (change === "ownership") tell.log.info({ reason: run.reason }, "the ownership registry changed since the last run: planning again");
  }
  return memory.lastInvalid === run.revision && good?.configHash === memory.configHash && !forced ? "invalid" : undefined;
}
