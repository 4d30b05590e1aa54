/**
 * Leases of a fleet on the real PostgreSQL: several lease managers in this process share a list
 * of environments — each led by exactly one, spread by share, handed over when one stops or
 * joins, fenced once lost, and triggers reach each environment's leader; a renewal extends only
 * what is held here, by token.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import pg from "pg";
import { LeaseTable } from "../../src/fleet/lease-table.js";
import { eventually } from "../helpers/eventually.js";
import { fleetEnvironments as environments, leadersOf, replica } from "../helpers/fleet-leases.js";
import { dropTestSchemas, pgUrl, sql, testSchema } from "../helpers/postgres.js";

const allLedOnce = (m: Map<string, string[]>): boolean => [...m.values()].every((x) => x.length === 1);

afterAll(dropTestSchemas);

describe("fleet leases", () => {
  it("lead every environment by exactly one replica, within each replica's share, and agree with the table", async () => {
    const schema = testSchema();
    const fleet = [replica(schema, "a"), replica(schema, "b"), replica(schema, "c")];
    await eventually(
      () => leadersOf(fleet),
      (m) => allLedOnce(m) && fleet.every((f) => f.leading().length <= Math.ceil(environments.length / 3)),
      15_000,
    );
    // never two at once, sampled over several renewals
    for (let i = 0; i < 20; i++) {
      expect([...leadersOf(fleet).values()].every((x) => x.length <= 1)).toBe(true);
      await sleep(50);
    }
    const rows = fleet[0]!.holders() ?? [];
    expect(rows.length).toBe(environments.length);
    for (const r of rows) expect(r.holderName).toBe(leadersOf(fleet).get(r.environment)?.[0] ?? null);
    expect(rows.map((r) => r.environment).sort()).toEqual([...environments].sort());
  });

  it("hand a stopped replica's environments to the others, and give some back when a replica joins", async () => {
    const schema = testSchema();
    const a = replica(schema, "a");
    const b = replica(schema, "b");
    await eventually(
      () => leadersOf([a, b]),
      (m) => allLedOnce(m) && a.leading().length <= 4 && b.leading().length <= 4,
      15_000,
    );
    await b.stop();
    await eventually(
      () => a.leading().length,
      (n) => n === 7,
      10_000,
    );
    const c = replica(schema, "c");
    await eventually(
      () => [a.leading().length, c.leading().length],
      ([x, y]) => x! <= 4 && y! >= 3 && x! + y! === 7,
      15_000,
    );
    expect(allLedOnce(leadersOf([a, c]))).toBe(true);
  });

  it("name, in a replica's view of the table, itself as the leader of exactly what it leads, through a handover", async () => {
    const schema = testSchema();
    const a = replica(schema, "a");
    await eventually(
      () => a.leading().length,
      (n) => n === environments.length,
      10_000,
    );
    const c = replica(schema, "c");
    // sampled far more often than a renewal: the table is read once a round, the handover happens between reads
    const wrong: string[] = [];
    const end = Date.now() + 4_000;
    while (Date.now() < end) {
      for (const r of a.holders() ?? []) {
        const showsSelf = r.live && r.holderName === "a";
        if (showsSelf !== a.leads(r.environment)) wrong.push(`${r.environment}: leads ${a.leads(r.environment)}, shows ${r.holderName}`);
      }
      await sleep(2);
    }
    expect(a.leading().length + c.leading().length).toBe(environments.length);
    expect(c.leading().length).toBeGreaterThan(0);
    expect(wrong).toEqual([]);
  });

  it("fences a replica whose lease was taken over: check throws STATE_LOCK_LOST and it is told", async () => {
    const schema = testSchema();
    const events: string[] = [];
    const a = replica(schema, "a", events, ["solo"]);
    await eventually(
      () => a.leads("solo"),
      (x) => x,
    );
    expect(() => a.check("solo")).not.toThrow();
    // another holder takes the lease as if it had expired (the database's word wins)
    await sql(`UPDATE ${schema}.fleet_leases SET holder = 'someone', token = token + 1, expires_at = now() + interval '1 hour'`);
    await eventually(
      () => events.includes("-solo"),
      (x) => x,
      5_000,
    );
    expect(() => a.check("solo")).toThrow(/no longer leads environment solo/);
    try {
      a.check("solo");
    } catch (err) {
      expect((err as { code: string }).code).toBe("STATE_LOCK_LOST");
    }
  });

  it("carries a trigger received anywhere to each environment's leader, and says which had none", async () => {
    const schema = testSchema();
    const ea: string[] = [];
    const eb: string[] = [];
    const a = replica(schema, "a", ea, ["one", "two"]);
    const b = replica(schema, "b", eb, ["one", "two"]);
    await eventually(
      () => a.leading().length === 1 && b.leading().length === 1,
      (x) => x,
      15_000,
    );
    const out = await a.forward(["one", "two"], "webhook");
    expect(out.missing).toEqual([]);
    expect([...out.leaders.values()].sort()).toEqual(["a", "b"]);
    expect([...ea, ...eb].filter((e) => e.startsWith("webhook:")).sort()).toEqual(["webhook:one", "webhook:two"]);
    // an environment no replica leads is missing (answered 503 by the daemon): sent, and unacknowledged for as long as a leader could still lead
    const none = await a.forward(["nobody"], "sync");
    expect([none.missing, none.sent]).toEqual([["nobody"], true]);
    expect(none.ms).toBeGreaterThanOrEqual(a.ackTimeoutMs - 5);
  });

  it("ends the sessions of the replica whose expired lease it took over, releasing a state lock that replica still held", async () => {
    const schema = testSchema();
    const table = new LeaseTable(schema, 300);
    const me = new pg.Client({ connectionString: pgUrl });
    await me.connect();
    // a paused replica: its lease expires, its session (holding a lock) stays open
    const paused = new pg.Client({ connectionString: pgUrl, application_name: "gatesync abc123 vm:1" });
    paused.on("error", () => undefined);
    await paused.connect();
    try {
      await table.prepare(me, ["x"]);
      await paused.query("SELECT pg_advisory_lock(4242, 1)");
      expect((await table.acquire(me, "x", { id: "abc123", name: "vm:1" }, 1_000))?.previous).toBeNull();
      expect(await table.acquire(me, "x", { id: "def456", name: "vm:2" }, 1_000)).toBeUndefined();
      await sleep(400);
      const got = await table.acquire(me, "x", { id: "def456", name: "vm:2" }, 1_000);
      expect(got).toEqual({ token: 2, previous: "abc123" });
      expect(await table.fenceOff(me, "abc123")).toBe(1);
      const free = await eventually(
        async () => (await me.query<{ ok: boolean }>("SELECT pg_try_advisory_lock(4242, 1) AS ok")).rows[0]?.ok,
        (ok) => ok === true,
        5_000,
      );
      expect(free).toBe(true);
    } finally {
      await paused.end().catch(() => undefined);
      await me.end();
    }
  });

  it("renews only the leases a replica holds here, by token, and gives back those the table gives it but it does not hold", async () => {
    const schema = testSchema();
    const table = new LeaseTable(schema, 60_000);
    const me = new pg.Client({ connectionString: pgUrl });
    await me.connect();
    try {
      await table.prepare(me, ["x", "y"]);
      const x = await table.acquire(me, "x", { id: "r1", name: "one" }, 1_000);
      const y = await table.acquire(me, "y", { id: "r1", name: "one" }, 1_000);
      expect([x?.token, y?.token]).toEqual([1, 1]);
      await sql(`UPDATE ${schema}.fleet_leases SET expires_at = now() + interval '10 seconds'`);
      const expiry = async (): Promise<Record<string, string>> =>
        Object.fromEntries(
          (
            await sql<{ environment: string; left: string }>(
              `SELECT environment, (expires_at - now() > interval '30 seconds')::text AS left FROM ${schema}.fleet_leases`,
            )
          ).map((r) => [r.environment, r.left]),
        );
      // holding x here (not y): only x is extended; a wrong token extends nothing
      expect(await table.renew(me, "r1", [{ environment: "x", token: 1 }], 1_000)).toEqual([{ environment: "x", token: 1 }]);
      expect(await expiry()).toEqual({ x: "true", y: "false" });
      expect(await table.renew(me, "r1", [{ environment: "y", token: 7 }], 1_000)).toEqual([]);
      expect(await table.renew(me, "r2", [{ environment: "x", token: 1 }], 1_000)).toEqual([]);
      // y is in the table under r1 but not held here: given back, x kept
      expect(await table.releaseStray(me, "r1", [{ environment: "x", token: 1 }], 1_000)).toEqual([{ environment: "y", token: 1 }]);
      expect((await table.holders(me, ["x", "y"])).map((r) => [r.environment, r.holderName, r.live])).toEqual([
        ["x", "one", true],
        ["y", null, false],
      ]);
    } finally {
      await me.end();
    }
  });
});
