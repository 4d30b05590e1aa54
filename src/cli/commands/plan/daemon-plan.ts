/**
 * A merge-request plan of what the daemon will do (docs/user/merge-requests.md): the team's
 * settings are the checkout's (the merge request's commit), the operator's that matter to a
 * plan — which environments the daemon runs, each one's state, orphan policy, deactivation
 * guard and targets' settings — are the daemon's, read from its `GET /config` with the state token. A setting the
 * daemon cannot give fails the plan (STATE_UNREACHABLE), never replaced by the checkout's own.
 */
import type { GatesyncConfig } from "../../../config/config.js";
import { environmentsOf } from "../../../config/environments.js";
import type { EnvironmentConfig } from "../../../config/environments.js";
import { ConfigError, ErrorCode, StateError } from "../../../errors.js";
import { environmentStatePath, holdTextLimit } from "../../../daemon/http/config-endpoint.js";
import { boundText } from "../../../text/bounded-text.js";
import { parseJsonWithin } from "../../../text/json-depth.js";
import type { OperatorSettingsView } from "../../../daemon/http/config-endpoint.js";
import { daemonAddress } from "../../common/daemon-client.js";
import { isOwnerName } from "../../../record/ownership/ownership.js";
import { readFromDaemon } from "./plan-state.js";
import { followedRefFrom } from "../../../config/track-section.js";
import type { FollowedRef } from "../../../config/track-section.js";
import { defaultTargets, isTargetSettingsView, targetsFromView } from "../../../config/target-settings-view.js";

/** One environment as the daemon runs it: the checkout's team settings, the daemon's operator settings, and where its state is served. */
export interface DaemonEnvironment {
  readonly environment: EnvironmentConfig;
  readonly stateUrl: string;
  /** What the daemon says it applies there (a daemon that does not say: unknown, never the checkout's). */
  readonly follows?: FollowedRef;
  /** The freeze or closed sync window the daemon says holds it now: its message, controls stripped and bounded. */
  readonly hold?: string;
}

export interface DaemonPlanTargets {
  readonly environments: readonly DaemonEnvironment[];
  /** Environments the checkout names that the daemon does not run: skipped by it, so not planned. */
  readonly notRun: readonly string[];
}

/** An environment's entry as the daemon writes it: a name an environment may have, and an orphan policy gatesync knows. */
function wellFormed(e: unknown): boolean {
  const entry = e as Partial<OperatorSettingsView["environments"][number]> | null;
  return (
    entry !== null &&
    typeof entry === "object" &&
    typeof entry.name === "string" &&
    /^[a-z][a-z0-9-]{0,39}$/.test(entry.name) &&
    (entry.orphans === "report" || entry.orphans === "deactivate") &&
    (entry.owner === undefined || (typeof entry.owner === "string" && isOwnerName(entry.owner))) &&
    typeof entry.deactivationGuard === "object" &&
    entry.deactivationGuard !== null &&
    (entry.targets === undefined || isTargetSettingsView(entry.targets)) &&
    (entry.hold === undefined || (typeof entry.hold === "object" && entry.hold !== null && typeof entry.hold.message === "string"))
  );
}

/** The settings view nests a few levels (environments, targets, their lists): deeper is not the daemon's answer. */
const viewDepth = 16;

function parseView(text: string, where: string): OperatorSettingsView {
  const v = parseJsonWithin(text, viewDepth) as Partial<OperatorSettingsView> | undefined;
  if (
    v === undefined ||
    typeof v.implicit !== "boolean" ||
    !Array.isArray(v.environments) ||
    v.environments.length === 0 ||
    !v.environments.every(wellFormed)
  ) {
    throw new StateError(ErrorCode.STATE_UNREACHABLE, `cannot read the daemon's operator settings from ${where}: the answer is not gatesync's /config`, {
      hint: "check that the address is the daemon's server (server.listen)",
    });
  }
  return v as OperatorSettingsView;
}

/** The daemon's operator settings, from `GET /config` at its address. */
export async function daemonSettings(base: string, token: string | undefined): Promise<OperatorSettingsView & { readonly origin: string }> {
  const root = base.replace(/\/+$/, "").replace(/\/state$/, "");
  const url = daemonAddress(`${root}/config`, "--state-url");
  return { ...parseView(await readFromDaemon(url, token, "operator settings"), `${url.origin}${url.pathname}`), origin: root };
}

/** The checkout's config of an environment the daemon runs: its own entry, else the top level's values and no patches (as the daemon runs it). */
function checkoutEnvironment(top: GatesyncConfig, name: string, implicit: boolean): EnvironmentConfig {
  if (implicit) return environmentsOf({ ...top, environments: [] })[0]!;
  const own = environmentsOf(top).find((e) => !e.implicit && e.name === name);
  return own ?? environmentsOf({ ...top, environments: [{ name, values: {}, patches: [], promotion: { soakMs: 0, mode: "manual" } }] })[0]!;
}

/**
 * The environments to plan, as the daemon runs them: its list (one, with `only`), each with
 * the daemon's orphan policy and guard over the checkout's config.
 */
export function daemonEnvironments(top: GatesyncConfig, view: OperatorSettingsView & { readonly origin: string }, only: string | undefined): DaemonPlanTargets {
  const run = view.environments.filter((e) => only === undefined || e.name === only);
  if (run.length === 0) {
    throw new ConfigError(
      ErrorCode.CONFIG_UNKNOWN_ENVIRONMENT,
      `the daemon does not run environment ${JSON.stringify(only)}: it runs ${view.environments.map((e) => e.name).join(", ")}`,
      {
        hint: `pass one of: ${view.environments.map((e) => `--env ${e.name}`).join(", ")}`,
      },
    );
  }
  const environments = run.map((d) => {
    const local = checkoutEnvironment(top, d.name, view.implicit);
    // the targets' settings are the daemon's (an older daemon that does not serve them: the defaults), never the checkout's
    const targets = d.targets === undefined ? defaultTargets(local.config.targets) : targetsFromView(d.targets, local.config.targets);
    // the owner is the daemon's (an operator setting), never the checkout's: the registry's rows are checked as its runs check them
    const { owner: _checkouts, ...team } = local.config;
    const config: GatesyncConfig = {
      ...team,
      targets,
      orphans: d.orphans,
      deactivationGuard: d.deactivationGuard,
      ...(d.owner === undefined ? {} : { owner: d.owner }),
    };
    const follows = followedRefFrom(d.follows);
    // the path is derived from the name, never taken from the answer: the state token goes there
    return {
      environment: { ...local, config },
      stateUrl: `${view.origin}${environmentStatePath(d.name, view.implicit)}`,
      ...(follows === undefined ? {} : { follows }),
      // the daemon's text, shown in a comment: stripped and bounded as any text from a server
      ...(d.hold === undefined ? {} : { hold: boundText(d.hold.message, holdTextLimit) }),
    };
  });
  const runs = new Set(view.implicit ? [] : view.environments.map((e) => e.name));
  const notRun = only !== undefined ? [] : (top.environments ?? []).map((e) => e.name).filter((n) => !runs.has(n));
  return { environments, notRun };
}
