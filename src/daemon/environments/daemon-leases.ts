/**
 * Who applies each environment when replicas share a PostgreSQL state: the fleet's leases
 * (src/fleet/leases.ts), for one environment or many — the implicit environment of a config
 * without `environments:` too. A lease gained makes its environment run now; a lease lost stops
 * the run under way before its next call (the fence); a trigger another replica received reaches
 * the leader over the lease connection's LISTEN/NOTIFY.
 */
import type { GatesyncConfig } from "../../config/config.js";
import { leaseDefaults } from "../../config/lease-section.js";
import { FleetLeases } from "../../fleet/leases.js";
import type { Logger } from "../../logger.js";
import { postgresUrl } from "../../record/open-backend.js";
import type { EnvironmentUnit } from "./environment-unit.js";
import type { DaemonMetrics } from "../metrics/metrics.js";

export interface LeasedEnvironments {
  readonly config: GatesyncConfig;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger;
  readonly names: readonly string[];
  /** The daemon's environments, by name (filled in once the leases exist: read when a lease changes). */
  readonly units: ReadonlyMap<string, EnvironmentUnit>;
  readonly ownUrl: () => string | undefined;
  /** The daemon's metrics: every replica exports the lease table it read (an environment nobody leads). */
  readonly metrics: DaemonMetrics;
  /** Runs these environments here: a trigger another replica received, for environments this one leads. */
  readonly onTrigger: (environments: readonly string[], reason: string, from?: string, traceparent?: string) => void;
  /** A lease gained: the environment's next run goes before the runs waiting for a place (run-slots.ts). */
  readonly tookOver?: (environment: string) => void;
}

/** The leases of the daemon's environments on a PostgreSQL state (in its schema); undefined on any other state. */
export function leasesFor(parts: LeasedEnvironments): FleetLeases | undefined {
  const { config, units } = parts;
  if (config.state.backend !== "postgres") return undefined;
  const lease = config.state.lease ?? leaseDefaults;
  return new FleetLeases({
    url: postgresUrl(config, parts.env),
    schema: config.state.schema,
    environments: parts.names,
    ttlMs: lease.durationMs,
    renewMs: lease.renewMs,
    logger: parts.logger,
    ownUrl: parts.ownUrl,
    onAcquire: (e) => {
      units.get(e)?.metrics.setLeader(true);
      units.get(e)?.notifier?.leaderChanged(true);
      parts.tookOver?.(e);
      units.get(e)?.reconciler.trigger("leadership");
    },
    onLose: (e) => {
      units.get(e)?.metrics.setLeader(false);
      units.get(e)?.notifier?.leaderChanged(false);
      units.get(e)?.reconciler.interrupt();
    },
    onTrigger: parts.onTrigger,
    onLeases: (rows) => parts.metrics.setLeaseTable(rows),
    // a lease given back to spread the environments is one whose environment is not applying
    busy: (e) => units.get(e)?.history.live.running === true,
  });
}
