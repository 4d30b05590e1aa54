/**
 * `GET /config`: the operator's settings a merge-request plan needs to show what the daemon will
 * do (docs/user/merge-requests.md) — which environments the daemon runs, where each one's state
 * is served, its orphan policy and deactivation guard, its targets' settings (no credential's
 * variable: target-settings-view.ts), and what it follows (`track:`: whether a
 * merge reaches it at once, when tagged, or by promotion), and the freeze or closed sync window
 * holding it now (hold.ts: the comment says so). The team's settings are the merge
 * request's own (its checkout); nothing here is a secret or a credential's name or URL. Guarded
 * by the state token, as `GET /state` is.
 */
import type { GatesyncConfig } from "../../config/config.js";
import { claimantOf, environmentsOf } from "../../config/environments.js";
import { followedRef } from "../../config/track-section.js";
import type { FollowedRef } from "../../config/track-section.js";
import type { Reply } from "../../http/http-io.js";
import { targetSettingsView } from "../../config/target-settings-view.js";
import type { TargetSettingsView } from "../../config/target-settings-view.js";
import type { Hold } from "../hold/hold.js";

/** What `GET /config` answers (plan-daemon.ts reads it). */
export interface OperatorSettingsView {
  /** True when the daemon runs one environment, `default` (its config has no `environments:`). */
  readonly implicit: boolean;
  readonly environments: ReadonlyArray<{
    readonly name: string;
    /** The path of its state, below the daemon's address. */
    readonly state: string;
    readonly orphans: GatesyncConfig["orphans"];
    /** The team its runs claim for in the ownership registry (docs/user/teams.md): a merge-request plan checks as it. */
    readonly owner?: string;
    readonly deactivationGuard: GatesyncConfig["deactivationGuard"];
    /** What it applies (its `track:`, else the top level's git ref); absent for a directory source. */
    readonly follows?: FollowedRef;
    /** Its targets' settings a plan uses (URLs, batch route and size, app-type providers, rates): no credential's variable. */
    readonly targets?: TargetSettingsView;
    /** The freeze or closed sync window holding it now (hold.ts): the operator's, no secret; its text bounded. */
    readonly hold?: HoldView;
  }>;
}

/** An environment's hold as `GET /config` says it. */
export interface HoldView {
  readonly kind: Hold["kind"];
  /** "production frozen until 18:00 UTC: incident 4521", at most {@link holdTextLimit} characters. */
  readonly message: string;
  readonly until?: string;
}

/** The longest hold message served (a freeze's reason is the operator's free text). */
export const holdTextLimit = 300;

const bounded = (text: string): string => (text.length > holdTextLimit ? `${text.slice(0, holdTextLimit - 1)}…` : text);

/**
 * Where an environment's state is served, below the daemon's address: the one definition of it,
 * for the daemon's answer and for a merge-request plan, which derives it from the name rather
 * than following a path the answer gives (the state token goes where it points).
 */
export function environmentStatePath(name: string, implicit: boolean): string {
  return implicit ? "/state" : `/environments/${encodeURIComponent(name)}/state`;
}

export function operatorSettingsView(config: GatesyncConfig, holds: ReadonlyMap<string, Hold> = new Map()): OperatorSettingsView {
  const environments = environmentsOf(config);
  const implicit = environments[0]!.implicit;
  return {
    implicit,
    environments: environments.map((e) => {
      const follows = followedRef(e.config.source, e.config.track);
      return {
        name: e.name,
        state: environmentStatePath(e.name, implicit),
        orphans: e.config.orphans,
        owner: claimantOf(e.config).owner,
        deactivationGuard: e.config.deactivationGuard,
        targets: targetSettingsView(e.config.targets),
        ...(follows === undefined ? {} : { follows }),
        ...holdEntry(holds.get(e.name)),
      };
    }),
  };
}

function holdEntry(hold: Hold | undefined): { hold?: HoldView } {
  if (hold === undefined) return {};
  return { hold: { kind: hold.kind, message: bounded(hold.message), ...(hold.until === undefined ? {} : { until: hold.until }) } };
}

/** The operator's settings and each environment's hold now, past the state token (the route table checks it first: http/credentials.ts). */
export async function handleConfigRead(config: GatesyncConfig, holdOf?: (name: string) => Promise<Hold | undefined>): Promise<Reply> {
  const holds = new Map<string, Hold>();
  for (const e of environmentsOf(config)) {
    const hold = await holdOf?.(e.name);
    if (hold !== undefined) holds.set(e.name, hold);
  }
  return { status: 200, body: operatorSettingsView(config, holds), headers: { "cache-control": "no-store" } };
}
