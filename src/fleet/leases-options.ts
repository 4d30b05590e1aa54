/** What a replica's lease manager (leases.ts) is given: where the lease table is, which environments, the lease times and its hooks. */
import type { Logger } from "../logger.js";
import type { FleetReason } from "./fleet-messages.js";
import type { HolderRow } from "./lease-table.js";

export interface FleetLeasesOptions {
  readonly url: string;
  /** The schema of the fleet's tables (the state's). */
  readonly schema: string;
  readonly environments: readonly string[];
  readonly logger: Logger;
  /** This replica's name in logs, messages and /status (default host:pid). */
  readonly replica?: string;
  /** This replica's HTTP address, recorded for /status. */
  readonly ownUrl?: () => string | undefined;
  /** How long a lease lasts without renewal (gatesync.yaml `state.lease.duration`, 5 s by default). */
  readonly ttlMs: number;
  /** How often leases are renewed (`state.lease.renewEvery`, 1 s by default; at most a third of the duration). */
  readonly renewMs: number;
  readonly onAcquire?: (environment: string) => void;
  readonly onLose?: (environment: string) => void;
  /** A trigger another replica received, for environments this one leads. */
  readonly onTrigger?: (environments: readonly string[], reason: FleetReason, from: string, traceparent: string | undefined) => void;
  /** Whether an environment is applying now (a lease given back to spread the fleet is one that is not). */
  readonly busy?: (environment: string) => boolean;
  /** The lease table as read at each tick (undefined while the database cannot be read): who leads what. */
  readonly onLeases?: (rows: readonly HolderRow[] | undefined) => void;
}
