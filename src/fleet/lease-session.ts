/**
 * The lease connection of a fleet replica and what bounds it in time.
 *
 * A peer that goes silent (a dropped route, a black-holed packet: no reset) must be noticed in
 * bounded time on both ends: every statement has a client-side timeout and a shorter server-side
 * `statement_timeout` (a renewal queued behind a row lock is cancelled by PostgreSQL before the
 * replica gives up on it, so a timeout rarely leaves an outcome unknown); TCP keepalives on the
 * client socket, `tcp_keepalives_*` and `tcp_user_timeout` on the server's. None of these is the
 * fence: the local deadline (leases.ts) is, and it ends before PostgreSQL lets anyone else take
 * the lease.
 *
 * A statement whose outcome is unknown (the client timed out, the connection broke) is resolved
 * before the next renewal, never assumed (`endSessions`): its backend is terminated and waited
 * for, so it cannot run later; the rows the table then says this replica holds are checked
 * against those it holds here by the next tick (LeaseTable.releaseStray).
 */
import { setTimeout as sleep } from "node:timers/promises";
import type pg from "pg";
import { ErrorCode, StateError } from "../errors.js";

/** The times of a fleet's leases, and those derived from them. */
export interface LeaseTiming {
  /** How long a lease lasts without renewal (on PostgreSQL's clock). */
  readonly ttlMs: number;
  /** How often leases are renewed. */
  readonly renewMs: number;
  /** The client gives up on a statement after this. */
  readonly queryTimeoutMs: number;
  /** PostgreSQL cancels a statement after this (before the client gives up). */
  readonly statementTimeoutMs: number;
  /** The local deadline ends this long before the lease's end on the database's clock. */
  readonly marginMs: number;
  /**
   * How long a trigger carried to a leader waits for its acknowledgement: as long as a leader may
   * still lead after the trigger was sent (its last renewal, sent before, plus the lease less the
   * margin: its own fence). A leader slower than that to hear it — its event loop held up, its
   * connection lost — leads no more when it does, and ignores it; one merely slow (a loaded
   * machine) still takes it, and a shorter wait would refuse a trigger that was run.
   */
  readonly ackMs: number;
}

export function leaseTiming(ttlMs: number, renewMs: number): LeaseTiming {
  const queryTimeoutMs = Math.max(200, Math.floor(ttlMs / 2));
  // clocks run at slightly different rates, and a renewal is dated when sent, not when run
  const marginMs = Math.max(renewMs, ttlMs / 5);
  return {
    ttlMs,
    renewMs,
    queryTimeoutMs,
    // a little before the client gives up: the statement's end is then known on both sides
    statementTimeoutMs: queryTimeoutMs - Math.max(50, Math.floor(queryTimeoutMs / 10)),
    marginMs,
    ackMs: ttlMs - marginMs,
  };
}

/** The client configuration of a lease connection: every timeout above, on both ends. */
export function leaseClientConfig(url: string, applicationName: string, t: LeaseTiming): pg.ClientConfig {
  const idleSeconds = Math.max(1, Math.floor(t.renewMs / 1000));
  const serverSettings = [`tcp_user_timeout=${t.ttlMs}`, `tcp_keepalives_idle=${idleSeconds}`, "tcp_keepalives_interval=1", "tcp_keepalives_count=3"];
  return {
    connectionString: url,
    application_name: applicationName,
    connectionTimeoutMillis: t.queryTimeoutMs * 2,
    query_timeout: t.queryTimeoutMs,
    statement_timeout: t.statementTimeoutMs,
    idle_in_transaction_session_timeout: t.queryTimeoutMs,
    keepAlive: true,
    keepAliveInitialDelayMillis: t.renewMs,
    options: serverSettings.map((s) => `-c ${s}`).join(" "),
  };
}

/**
 * Ends the backends of lease connections this replica dropped (`pids`), and waits until each is
 * gone: a statement still queued on one (behind a row lock) cannot run afterwards. Answers the
 * pids, all gone; throws STATE_IO when one is still there after `timeoutMs` (the caller renews
 * nothing until it is gone). Only a backend of this replica's own application_name is signalled, so a
 * pid the system gave to another session since is left alone.
 */
export async function endSessions(client: pg.Client, pids: readonly number[], applicationName: string, timeoutMs: number): Promise<number[]> {
  if (pids.length === 0) return [];
  const alive = async (): Promise<Set<number>> => {
    const r = await client.query<{ pid: number }>(
      "SELECT pid FROM pg_stat_activity WHERE pid = ANY($1::int[]) AND application_name = $2 AND pid <> pg_backend_pid()",
      [pids, applicationName],
    );
    return new Set(r.rows.map((x) => x.pid));
  };
  await client.query(
    "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE pid = ANY($1::int[]) AND application_name = $2 AND pid <> pg_backend_pid()",
    [pids, applicationName],
  );
  const end = performance.now() + timeoutMs;
  let left = await alive();
  while (left.size > 0 && performance.now() < end) {
    await sleep(20);
    left = await alive();
  }
  if (left.size > 0)
    throw new StateError(ErrorCode.STATE_IO, `the backends of earlier lease connections (${[...left].join(", ")}) are still running`, {
      hint: "nothing to do: the replica tries again at its next round, and renews nothing until PostgreSQL reports those sessions gone",
    });
  return [...pids];
}
