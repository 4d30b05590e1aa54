/**
 * The daemon's environments as its routes serve them (http/route-table.ts), one shape for one or
 * many: each environment below `/environments/NAME/` (the implicit one of a config without
 * `environments:` at the root too, its `/status` the one it always had), `/status` of them all
 * (and who leads each in a fleet), and the relay that carries a trigger to each environment's leader.
 */
import type { FleetLeases } from "../../fleet/leases.js";
import type { HolderRow } from "../../fleet/lease-table.js";
import { scrubDeep } from "../../secrets/redaction.js";
import type { ConfigReloader } from "../environments/config-reload.js";
import type { EnvironmentUnit } from "../environments/environment-unit.js";
import { buildStatus, buildStatusHead } from "./status-body.js";
import type { ServedReconciler } from "./served.js";
import type { ServedEnvironment } from "./served.js";
import { ownershipAnswer } from "./ownership-endpoint.js";
import { verificationStatus } from "../../promotion/promotion-status.js";
import type { EnvironmentSync, ForwardResult, ForwardedReason, TriggerRelay } from "./triggers.js";

export interface EnvironmentsHttp {
  readonly units: readonly EnvironmentUnit[];
  readonly leases: FleetLeases | undefined;
  readonly source: string;
  readonly reloader?: ConfigReloader;
  /** The one environment of a config without `environments:`. */
  readonly implicit: boolean;
  /** Every environment's loops at once (what the triggers run). */
  readonly served: ServedReconciler;
}

/** Who leads each environment (a fleet: the lease table; else this daemon), by name; null when none does. */
function leadersOf(http: EnvironmentsHttp): { readonly leader: Map<string, string | null>; readonly rows: readonly HolderRow[] | undefined } {
  if (http.leases === undefined) return { leader: new Map(http.units.map((u) => [u.name, "this daemon"])), rows: undefined };
  const rows = http.leases.holders();
  // without the database, what this replica knows: the environments it leads
  if (rows === undefined) return { leader: new Map(http.units.map((u) => [u.name, http.leases!.leads(u.name) ? http.leases!.name : null])), rows };
  return { leader: new Map(rows.map((r) => [r.environment, r.live ? r.holderName : null])), rows };
}

/**
 * One environment's `/status`: the status of a daemon of one environment, with its name and
 * leader; `head`: without its resources (the `/status` of every environment, which reads no record).
 */
async function environmentStatus(unit: EnvironmentUnit, http: EnvironmentsHttp, leader: string | null, head = false): Promise<Record<string, unknown>> {
  const parts = { reconciler: unit.reconciler, runs: unit.history, sourceDescription: http.source, role: () => unit.role() };
  const status = head ? await buildStatusHead({ ...parts, version: () => unit.snapshots.version() }) : await buildStatus({ ...parts, state: unit.snapshots });
  // its verifications that stand and those a later failing run withdrew (promotion.md)
  const verification = await verificationStatus(unit.state).catch(() => undefined);
  // held: frozen or outside its sync window (hold.ts), "production frozen until 18:00 UTC: incident 4521"
  const hold = (await unit.hold()) ?? null;
  return {
    environment: unit.name,
    leader,
    ...status,
    nextRunAt: unit.reconciler.nextRunAt ?? null,
    hold,
    ...(verification === undefined ? {} : { verification }),
  };
}

/** `/status`: every environment without its resources (those are in `/environments/NAME/status`), and the fleet. */
export async function environmentsStatus(http: EnvironmentsHttp): Promise<Record<string, unknown>> {
  const { leader, rows } = leadersOf(http);
  const environments = [];
  for (const u of http.units) {
    const { service: _service, source: _source, ...head } = await environmentStatus(u, http, leader.get(u.name) ?? null, true);
    environments.push(head);
  }
  const leases = http.leases;
  return scrubDeep({
    service: "gatesync",
    role: leases === undefined ? "single" : "fleet",
    ready: !http.served.isStopping,
    synced: http.served.synced,
    source: http.source,
    ...(http.reloader === undefined ? {} : { config: http.reloader.status }),
    ...(leases === undefined
      ? {}
      : {
          fleet: {
            replica: leases.name,
            replicas: leases.replicas,
            leads: leases.leading(),
            leases: (rows ?? []).map((r) => ({ environment: r.environment, leader: r.live ? r.holderName : null, token: r.token })),
            // nobody leads these, or (never expected) this replica and another at once
            ...(leases.leadership() ?? { leaderless: [], ledTwice: [] }),
          },
        }),
    environments,
  });
}

/**
 * Each environment as its routes serve it (http/route-table.ts): its page, state and `/status` —
 * a named one's with its name and leader; the implicit one's the daemon's own, as before
 * environments existed (its role, the config in force).
 */
export function servedEnvironments(http: EnvironmentsHttp): ServedEnvironment[] {
  return http.units.map((unit) => ({
    name: unit.name,
    page: unit.page,
    state: unit.snapshots,
    ownership: () => ownershipAnswer(unit.reconciler.configInForce.config, unit.ownership),
    status: http.implicit
      ? () =>
          buildStatus({
            reconciler: http.served,
            runs: unit.history,
            state: unit.snapshots,
            sourceDescription: http.source,
            role: () => unit.role(),
            ...(http.reloader === undefined ? {} : { config: () => http.reloader!.status }),
          })
      : () => environmentStatus(unit, http, leadersOf(http).leader.get(unit.name) ?? null),
  }));
}

/** `POST /environments/NAME/sync`: that environment alone is run, here (`run`) or by its leader. */
export function environmentSync(
  names: readonly string[],
  run: (environments: readonly string[], reason: string, from?: string, traceparent?: string) => void,
  leases: FleetLeases | undefined,
): EnvironmentSync {
  return {
    names,
    of: (name) => {
      if (!names.includes(name)) return undefined;
      const reconciler = { trigger: (reason: string, traceparent?: string): void => run([name], reason, undefined, traceparent) };
      return leases === undefined ? { reconciler } : { reconciler, relay: fleetRelay(leases, [name]) };
    },
  };
}

/**
 * Triggers at any replica on a PostgreSQL state: each environment's leader runs them (this
 * replica, when it leads them all, at once); 202 once every environment's leader took it, else
 * 503 naming the environments none took (the sender delivers again).
 */
export function fleetRelay(leases: FleetLeases, names: readonly string[]): TriggerRelay {
  return {
    isLeader: () => names.every((n) => leases.leads(n)),
    forward: async (reason: ForwardedReason, traceparent: string | undefined): Promise<ForwardResult> => {
      const out = await leases.forward(names, reason, traceparent);
      if (out.missing.length > 0 && !out.sent) {
        // (a replica just started, or reconnecting: /status says standby for any replica that does not lead)
        return { ok: false, why: `its lease connection to PostgreSQL is not up, so it could not carry it to a leader (${out.missing.join(", ")})` };
      }
      if (out.missing.length > 0) {
        return {
          ok: false,
          why: `no leader acknowledged it within ${leases.ackTimeoutMs} ms (${out.missing.join(", ")}: none leads it now, or its leader is reconnecting)`,
        };
      }
      return { ok: true, leader: [...new Set(out.leaders.values())].sort().join(", "), ms: out.ms };
    },
  };
}
