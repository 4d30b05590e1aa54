/**
 * The daemon's HTTP server, wired to its environments: one description of them whether a config
 * names several or none (environment-http.ts). Every environment is served below
 * `/environments/NAME/`; the implicit one (a config without `environments:`) at the root too,
 * whose paths are aliases of `/environments/default/…` (`/`, `/status`, `/state` and the pages,
 * as before environments existed), while named environments have a `/status` listing them all.
 * Either way one server, one metrics registry, one relay to the leaders.
 */
import type { GatesyncConfig } from "../../config/config.js";
import type { FleetLeases } from "../../fleet/leases.js";
import type { Logger } from "../../logger.js";
import type { ConfigReloader } from "../environments/config-reload.js";
import { environmentSync, environmentsStatus, fleetRelay, servedEnvironments } from "./environment-http.js";
import { runSoonWhereLed } from "../environments/environment-unit.js";
import type { EnvironmentUnit } from "../environments/environment-unit.js";
import type { DaemonMetrics } from "../metrics/metrics.js";
import { promoteTokenOf, serverTokens } from "./server-tokens.js";
import { startDaemonServer } from "./server.js";
import type { DaemonServer } from "./server.js";
import type { ServedReconciler } from "./served.js";
import type { PromoteRoute } from "./promote-endpoint.js";
import type { FreezeRoute } from "./freeze-endpoint.js";
import type { EnvironmentSources } from "../environments/environment-sources.js";

export interface ServedDaemon {
  readonly config: GatesyncConfig;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger;
  /** `server.listen`, or the caller's override. */
  readonly listen: string;
  /** The operator's config in force (a reload replaces it): GET /config. */
  readonly operatorConfig: () => GatesyncConfig;
  /** Runs these environments here (a leader runs what it is forwarded the same way). */
  readonly onTrigger: (environments: readonly string[], reason: string, from?: string, traceparent?: string) => void;
  readonly units: readonly EnvironmentUnit[];
  /** Whether the one environment is the implicit one (served at the root). */
  readonly implicit: boolean;
  readonly source: EnvironmentSources;
  readonly leases: FleetLeases | undefined;
  readonly reloader: ConfigReloader | undefined;
  readonly metrics: DaemonMetrics;
}

/** What the server and the triggers see: every environment at once. */
export function allOf(units: readonly EnvironmentUnit[], source: Pick<EnvironmentSources, "invalidate">): ServedReconciler {
  return {
    trigger: (reason, traceparent) => {
      source.invalidate();
      for (const u of units) u.reconciler.trigger(reason, traceparent);
    },
    get isStopping() {
      return units.some((u) => u.reconciler.isStopping);
    },
    // /readyz: this replica's own loops (a standby's /status says what its leader left: `runs`)
    get synced() {
      return units.every((u) => u.reconciler.synced);
    },
    get validationOverdue() {
      return units.map((u) => u.reconciler.validationOverdue).find((o) => o !== undefined);
    },
  };
}

export function serveDaemon(served: ServedDaemon): Promise<DaemonServer> {
  const { config, units, leases, reloader } = served;
  const names = units.map((u) => u.name);
  const tokens = serverTokens(config, served.env, served.logger);
  const every = allOf(units, served.source);
  const http = { units, leases, source: served.source.description, implicit: served.implicit, served: every, ...(reloader === undefined ? {} : { reloader }) };
  return startDaemonServer({
    listen: served.listen,
    reconciler: every,
    metrics: served.metrics,
    logger: served.logger,
    ...tokens,
    ...(leases === undefined ? {} : { relay: fleetRelay(leases, names) }),
    operatorConfig: served.operatorConfig,
    holdOf: async (name) => units.find((u) => u.name === name)?.hold(),
    // the implicit environment's role is the daemon's (leader, standby or single); of named environments, each has its own
    role: () => (served.implicit ? units[0]!.role() : leases === undefined ? "single" : "fleet"),
    environments: {
      implicit: served.implicit,
      list: servedEnvironments(http),
      statusOfAll: () => environmentsStatus(http),
      sync: environmentSync(names, served.onTrigger, leases),
      // promotion and freezes are between named environments: the implicit one's answer 404
      ...(served.implicit ? {} : { promote: promoteRoute(served), freeze: freezeRoute(promoteTokenOf(config, served.env).variable, served, units, leases) }),
    },
  });
}

/** `POST /environments/NAME/promote`: the promotion (or rollback) asked, then the environment run wherever it is led. */
function promoteRoute(served: ServedDaemon): PromoteRoute {
  const { units, leases } = served;
  return {
    ...promoteTokenOf(served.config, served.env),
    names: units.map((u) => u.name),
    promote: async (name, ask) => {
      const answer = await units.find((u) => u.name === name)!.promote(ask);
      // the row is in the shared state: the environment runs now wherever it is led, rather than at its schedule
      if (!ask.dryRun) runSoonWhereLed({ leases, unitOf: (n) => units.find((u) => u.name === n) }, name, ask.rollback === undefined ? "promotion" : "rollback");
      return answer;
    },
  };
}

/** The freeze route: the row written in the environment's state (every replica reads it), the environment run where it is led. */
function freezeRoute(variable: string | undefined, served: ServedDaemon, units: readonly EnvironmentUnit[], leases: FleetLeases | undefined): FreezeRoute {
  return {
    variable,
    names: units.map((u) => u.name),
    write: async (name, row) => {
      const unit = units.find((u) => u.name === name)!;
      await unit.state.appendHistory({ record: row }, unit.reconciler.configInForce.config.history);
      served.logger.info(
        { environment: name, frozen: row.frozen, reason: row.reason, until: row.until, by: row.by },
        row.frozen ? "environment frozen" : "environment unfrozen",
      );
      const hold = await unit.hold();
      unit.notifier?.held({ summary: hold === undefined ? `${name} unfrozen (${row.by}): it applies what waited` : `${hold.message} (${row.by})` });
      // an unfreeze: what waited is applied now, not at the schedule
      runSoonWhereLed({ leases, unitOf: (n) => units.find((u) => u.name === n) }, name, row.frozen ? "freeze" : "unfreeze");
      return hold;
    },
  };
}
