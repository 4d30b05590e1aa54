/**
 * Statements of unknown outcome on a fleet's lease connection (real PostgreSQL): PostgreSQL ends
 * a statement queued behind a row lock before the replica gives up on it; a dropped connection's
 * backend is ended before the next renewal; and a take or a renewal held past its timeout behind
 * a row lock orphans nothing — once the lock goes, the environment is led within the lease time
 * by the replica the table names.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import pg from "pg";
import { endSessions, leaseClientConfig, leaseTiming } from "../../src/fleet/lease-session.js";
import { LeaseTable } from "../../src/fleet/lease-table.js";
import type { FleetLeases } from "../../src/fleet/leases.js";
import { eventually } from "../helpers/eventually.js";
import { leadersOf, replica } from "../helpers/fleet-leases.js";
import { dropTestSchemas, pgUrl, sql, testSchema } from "../helpers/postgres.js";

afterAll(dropTestSchemas);

describe("lease statements of unknown outcome", () => {
  it("ends a dropped connection's backend, so a statement still queued behind a row lock never runs", async () => {
    const schema = testSchema();
    const table = new LeaseTable(schema, 60_000);
    const me = new pg.Client({ connectionString: pgUrl });
    const locker = new pg.Client({ connectionString: pgUrl });
    const dropped = new pg.Client({ connectionString: pgUrl, application_name: "gatesync abc123 vm:1" });
    dropped.on("error", () => undefined);
    await Promise.all([me.connect(), locker.connect(), dropped.connect()]);
    try {
      await table.prepare(me, ["x"]);
      await locker.query("BEGIN");
      await locker.query(`SELECT * FROM ${schema}.fleet_leases WHERE environment = 'x' FOR UPDATE`);
      const queued = table.acquire(dropped, "x", { id: "abc123", name: "vm:1" }, 60_000).catch((err: Error) => err);
      const pid = (dropped as unknown as { processID: number }).processID;
      await eventually(
        async () => (await sql<{ w: string | null }>("SELECT wait_event_type AS w FROM pg_stat_activity WHERE pid = $1", [pid]))[0]?.w,
        (w) => w === "Lock",
        5_000,
      );
      // another session's pid or another application's is never signalled
      expect(await endSessions(me, [pid], "gatesync other x", 1_000)).toEqual([pid]);
      expect((await sql("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid])).length).toBe(1);
      expect(await endSessions(me, [pid], "gatesync abc123 vm:1", 2_000)).toEqual([pid]);
      expect((await sql("SELECT 1 FROM pg_stat_activity WHERE pid = $1", [pid])).length).toBe(0);
      await locker.query("COMMIT");
      expect(await queued).toBeInstanceOf(Error);
      expect((await table.holders(me, ["x"]))[0]?.holder).toBeNull();
    } finally {
      await locker.end();
      await dropped.end().catch(() => undefined);
      await me.end();
    }
  });

  it("the lease session: PostgreSQL ends a statement queued behind a row lock before the replica gives up on it, and watches a silent client", async () => {
    const schema = testSchema();
    const timing = leaseTiming(3_000, 500);
    const lease = new pg.Client(leaseClientConfig(pgUrl, "gatesync abc123 vm:1", timing));
    lease.on("error", () => undefined);
    await lease.connect();
    const locker = await connected();
    try {
      const setting = async (name: string): Promise<string> => (await lease.query<{ v: string }>(`SELECT current_setting('${name}') AS v`)).rows[0]!.v;
      expect([await setting("tcp_user_timeout"), await setting("tcp_keepalives_idle"), await setting("tcp_keepalives_count")]).toEqual(["3000", "1", "3"]);
      expect(await setting("idle_in_transaction_session_timeout")).toBe("1500ms");
      const table = new LeaseTable(schema, timing.ttlMs);
      await table.prepare(lease, ["x"]);
      await locker.query("BEGIN");
      await locker.query(`SELECT * FROM ${schema}.fleet_leases WHERE environment = 'x' FOR UPDATE`);
      const t0 = performance.now();
      const err = (await table.acquire(lease, "x", { id: "abc123", name: "vm:1" }, timing.queryTimeoutMs).catch((e: unknown) => e)) as { code?: string };
      // cancelled by the server (a known outcome: nothing done), not abandoned by the client
      expect(err.code).toBe("57014");
      expect(performance.now() - t0).toBeLessThan(timing.queryTimeoutMs);
      await locker.query("COMMIT");
      expect((await table.holders(lease, ["x"]))[0]?.holder).toBeNull();
    } finally {
      await lease.end().catch(() => undefined);
    }
  });

  it("a take held past its timeout behind a row lock orphans nothing: once the lock goes, the environment is led within the lease time, by the replica the table names", async () => {
    const schema = testSchema();
    const times = { ttlMs: 3_000, renewMs: 500 };
    await new LeaseTable(schema, times.ttlMs).prepare(await connected(), ["solo", "other"]);
    const locker = await connected();
    await locker.query("BEGIN");
    await locker.query(`SELECT * FROM ${schema}.fleet_leases WHERE environment = 'solo' FOR UPDATE`);
    const a = replica(schema, "a", [], ["solo", "other"], times);
    // a's take of solo waits on the lock, past its timeout (1.5 s)
    await eventually(
      async () =>
        (await sql(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name LIKE 'gatesync % a' AND query LIKE '%acquired_at%'`))
          .length,
      (n) => n > 0,
      10_000,
    );
    await sleep(1_700);
    await locker.query("COMMIT");
    const releasedAt = Date.now();
    await eventually(
      () => a.leads("solo"),
      (x) => x,
      times.ttlMs,
    );
    console.log(`led again ${Date.now() - releasedAt} ms after the lock was let go`);
    await expectTableTruthful(schema, [a], 3_000);
  });

  it("a renewal held past its timeout behind a row lock orphans nothing: once the lock goes, the environment is led within the lease time, by the replica the table names", async () => {
    const schema = testSchema();
    const times = { ttlMs: 3_000, renewMs: 500 };
    const a = replica(schema, "a", [], ["solo"], times);
    const b = replica(schema, "b", [], ["solo"], times);
    const [leader] = await eventually(
      () => [a, b].filter((f) => f.leads("solo")),
      (x) => x.length === 1,
      15_000,
    );
    const locker = await connected();
    await locker.query("BEGIN");
    await locker.query(`SELECT * FROM ${schema}.fleet_leases WHERE environment = 'solo' FOR UPDATE`);
    // the leader's renewals wait on the lock past their timeouts, the lease runs out, the other's take waits too
    await takeWaitingOnLock(`gatesync % ${leader === a ? "b" : "a"}`);
    await sleep(1_700);
    expect(leadersOf([a, b], ["solo"]).get("solo")).toEqual([]);
    await locker.query("COMMIT");
    const releasedAt = Date.now();
    await eventually(
      () => leadersOf([a, b], ["solo"]).get("solo")!.length,
      (n) => n === 1,
      times.ttlMs,
    );
    console.log(`led again ${Date.now() - releasedAt} ms after the lock was let go`);
    await expectTableTruthful(schema, [a, b], 3_000);
  });
});

const clients: pg.Client[] = [];
afterEach(async () => {
  for (const c of clients.splice(0)) await c.end().catch(() => undefined);
});

async function connected(): Promise<pg.Client> {
  const c = new pg.Client({ connectionString: pgUrl });
  clients.push(c);
  await c.connect();
  return c;
}

/** Waits until a session named like `applicationName` waits on a row lock to take a lease. */
async function takeWaitingOnLock(applicationName: string): Promise<void> {
  await eventually(
    async () =>
      (
        await sql(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name LIKE $1 AND query LIKE '%acquired_at%'`, [
          applicationName,
        ])
      ).length,
    (n) => n > 0,
    15_000,
  );
}

/** For `ms`, every live holder the table names leads its environment (sampled every 100 ms). */
async function expectTableTruthful(schema: string, fleet: readonly FleetLeases[], ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const rows = await sql<{ environment: string; holder_name: string }>(
      `SELECT environment, holder_name FROM ${schema}.fleet_leases WHERE holder IS NOT NULL AND expires_at > now()`,
    );
    for (const r of rows) expect(fleet.find((f) => f.name === r.holder_name)?.leads(r.environment), `${r.holder_name} leads ${r.environment}`).toBe(true);
    await sleep(100);
  }
}
