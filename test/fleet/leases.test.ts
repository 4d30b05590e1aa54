/**
 * Leases of a fleet on the real PostgreSQL: several lease managers in this process share a list
 * of environments — each led by exactly one, spread by share, handed over when one stops or
 * joins, fenced once lost, and triggers reach each environment's leader.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import pg from "pg";
import path from "node:path";
import { loadConfig } from "../../src/config/config.js";
import { ValidationFailed } from "../../src/errors.js";
import { endSessions, leaseClientConfig, leaseTiming } from "../../src/fleet/lease-session.js";
import { LeaseTable } from "../../src/fleet/lease-table.js";
import { FleetLeases } from "../../src/fleet/leases.js";
import { createLogger } from "../../src/logger.js";
import { eventually } from "../helpers/daemon-process.js";
import { dropTestSchemas, pgUrl, sql, testSchema } from "../helpers/postgres.js";
import { positionOf, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const environments = ["dev", "eu", "prod", "qa", "staging", "us", "ap"];
const logger = createLogger({ level: "silent" });
const running: FleetLeases[] = [];

function replica(schema: string, name: string, events: string[] = [], envs = environments, times = { ttlMs: 1_500, renewMs: 250 }): FleetLeases {
  const f = new FleetLeases({
    url: pgUrl,
    schema,
    environments: envs,
    logger,
    replica: name,
    ...times,
    onAcquire: (e) => events.push(`+${e}`),
    onLose: (e) => events.push(`-${e}`),
    onTrigger: (es, reason) => events.push(...es.map((e) => `${reason}:${e}`)),
  });
  running.push(f);
  f.start();
  return f;
}

/** Each environment with the replicas that lead it now. */
function leadersOf(fleet: readonly FleetLeases[], envs = environments): Map<string, string[]> {
  return new Map(envs.map((e) => [e, fleet.filter((f) => f.leads(e)).map((f) => f.name)]));
}

const allLedOnce = (m: Map<string, string[]>): boolean => [...m.values()].every((x) => x.length === 1);

afterEach(async () => {
  for (const f of running.splice(0)) await f.stop();
});
afterAll(async () => {
  await dropTestSchemas();
  await removeTempRepos();
});

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
    // an environment no replica leads is missing (answered 503 by the daemon)
    const none = await a.forward(["nobody"], "sync");
    expect(none.missing).toEqual(["nobody"]);
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

describe("lease times in gatesync.yaml", () => {
  const config = (lease: string, environmentState = ""): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: config }
targets:
  gateway: { url: "http://127.0.0.1:9", credentialEnv: GW_KEY }
environments:
  eu: {${environmentState}}
  us: {}
state:
  backend: postgres
  urlEnv: DATABASE_URL
${lease}`;
  const failure = async (yaml: string): Promise<ValidationFailed> => {
    const dir = await tempRepo({ "gatesync.yaml": yaml });
    const err = await loadConfig(path.join(dir, "gatesync.yaml")).catch((e: unknown) => e);
    expect(err).toBeInstanceOf(ValidationFailed);
    return err as ValidationFailed;
  };

  it("are the operator's to set, the defaults (5s, renewed every 1s) where absent", async () => {
    const dir = await tempRepo({ "gatesync.yaml": config("  lease: { duration: 3s, renewEvery: 500ms }\n"), "other.yaml": config("") });
    expect((await loadConfig(path.join(dir, "gatesync.yaml"))).state).toMatchObject({ lease: { durationMs: 3_000, renewMs: 500 } });
    expect((await loadConfig(path.join(dir, "other.yaml"))).state).not.toHaveProperty("lease");
  });

  it("refuse fewer than three renewals per lease, located at renewEvery with a hint that, followed, loads", async () => {
    const yaml = config("  lease:\n    duration: 5s\n    renewEvery: 2s\n");
    const [d, ...more] = (await failure(yaml)).diagnostics;
    expect(more).toEqual([]);
    const at = positionOf(yaml, "2s");
    expect([d!.code, d!.path, d!.line, d!.column]).toEqual(["CONFIG_INVALID", "state.lease.renewEvery", at.line, at.column]);
    expect(d!.message).toBe("renewing every 2s is less than 3 renewals per lease of 5s: one slow renewal would lose the lease");
    expect(d!.hint).toBe("set `renewEvery: 1666ms` or less, or `duration: 6s` or more");
    const dir = await tempRepo({ "a.yaml": yaml.replace("renewEvery: 2s", "renewEvery: 1666ms"), "b.yaml": yaml.replace("duration: 5s", "duration: 6s") });
    expect((await loadConfig(path.join(dir, "a.yaml"))).state).toMatchObject({ lease: { durationMs: 5_000, renewMs: 1_666 } });
    expect((await loadConfig(path.join(dir, "b.yaml"))).state).toMatchObject({ lease: { durationMs: 6_000, renewMs: 2_000 } });
  });

  it("refuse a lease under a second, a renewal more often than every 100ms, and lease times of one environment's own", async () => {
    const short = (await failure(config("  lease: { duration: 500ms, renewEvery: 100ms }\n"))).diagnostics;
    expect(short.map((d) => [d.path, d.hint])).toEqual([["state.lease.duration", "set `duration: 1s` or more (the default is 5s)"]]);
    const often = (await failure(config("  lease: { duration: 1s, renewEvery: 50ms }\n"))).diagnostics;
    expect(often.map((d) => [d.path, d.hint])).toEqual([["state.lease.renewEvery", "set `renewEvery: 100ms` or more"]]);
    const own = (await failure(config("", " state: { backend: postgres, urlEnv: DATABASE_URL, schema: eu_own, lease: { duration: 9s } } "))).diagnostics;
    expect(own.map((d) => [d.path, d.message])).toEqual([["environments.eu.state.lease", "environment eu sets lease times of its own"]]);
  });
});
