/**
 * The daemon's HTTP server, wired to its environments. The implicit environment (a config
 * without `environments:`) is served at the root — `/`, `/status`, `/state` and the pages are
 * its own, as before environments existed; named environments are served below
 * `/environments/NAME/`, with `/status` listing them all (environment-http.ts). Either way one
 * server, one metrics registry, one relay to the leaders.
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
import { buildStatus } from "./status-body.js";
import type { DaemonServer } from "./server.js";
import type { DaemonServerOptions, ServedReconciler } from "./served.js";
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
  return startDaemonServer({
    listen: served.listen,
    reconciler: every,
    runs: units[0]!.history,
    metrics: served.metrics,
    state: units[0]!.snapshots,
    logger: served.logger,
    sourceDescription: served.source.description,
    ...tokens,
    ...(leases === undefined ? {} : { relay: fleetRelay(leases, names) }),
    ...(reloader === undefined ? {} : { config: () => reloader.status }),
    operatorConfig: served.operatorConfig,
    holdOf: async (name) => units.find((u) => u.name === name)?.hold(),
    ...(served.implicit ? atTheRoot(served) : belowEnvironments(served, every)),
  });
}

/** The implicit environment: its role, page and `/status` are the server's own; its root paths are aliases of `/environments/default/…`. */
function atTheRoot(served: ServedDaemon): Partial<DaemonServerOptions> {
  const unit = served.units[0]!;
  return {
    role: () => unit.role(),
    page: unit.page,
    environments: {
      implicit: true,
      list: [{ name: unit.name, page: unit.page, state: unit.snapshots, status: () => buildStatus(statusParts(served)) }],
      statusOfAll: () => buildStatus(statusParts(served)),
      sync: environmentSync([unit.name], served.onTrigger, served.leases),
    },
  };
}

/** What the implicit environment's `/status` reads: the server's own parts. */
function statusParts(served: ServedDaemon): Parameters<typeof buildStatus>[0] {
  const unit = served.units[0]!;
  return {
    reconciler: allOf(served.units, served.source),
    runs: unit.history,
    state: unit.snapshots,
    sourceDescription: served.source.description,
    role: () => unit.role(),
    ...(served.reloader === undefined ? {} : { config: () => served.reloader!.status }),
  };
}

/** Named environments: `/status` of them all, their pages, states, syncs and promotions below `/environments/NAME/`. */
function belowEnvironments(served: ServedDaemon, every: ServedReconciler): Partial<DaemonServerOptions> {
  const { units, leases, reloader } = served;
  const http = {
    units,
    leases,
    source: served.source.description,
    ...(reloader === undefined ? {} : { reloader }),
  };
  return {
    role: () => (leases === undefined ? "single" : "fleet"),
    environments: {
      implicit: false,
      list: servedEnvironments(http),
      statusOfAll: () => environmentsStatus({ ...http, served: every }),
      sync: environmentSync(
        units.map((u) => u.name),
        served.onTrigger,
        leases,
      ),
      promote: {
        ...promoteTokenOf(served.config, served.env),
        names: units.map((u) => u.name),
        promote: async (name, ask) => {
          const answer = await units.find((u) => u.name === name)!.promote(ask);
          // the row is in the shared state: the environment runs now wherever it is led, rather than at its schedule
          if (!ask.dryRun)
            runSoonWhereLed({ leases, unitOf: (n) => units.find((u) => u.name === n) }, name, ask.rollback === undefined ? "promotion" : "rollback");
          return answer;
        },
      },
      // the promotion token's: its value is the promote route's (the dispatcher checks that one), its variable recorded as who froze
      freeze: freezeRoute(promoteTokenOf(served.config, served.env).variable, served, units, leases),
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
