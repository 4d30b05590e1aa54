/**
 * Leases that cannot orphan an environment, with real replica processes of `gatesync run` on
 * the real PostgreSQL (a config with `environments:`, leases of 3 s renewed every 500 ms):
 *
 * - a take held past its timeout behind a row lock another session holds (the lease free): once
 *   the lock is let go the environment is led within the lease time, by the replica the table
 *   names (a take whose answer never came is given back, never renewed);
 * - a renewal held past its timeout behind a row lock another session holds: while it is held
 *   nobody leads (every replica says so: `leader: null`, gatesync_environment_leaderless 1), and
 *   once it is let go the environment is led again within the lease time, by a replica the table
 *   names, which applies the next commit;
 * - a leader cut off from PostgreSQL by a proxy that stops forwarding without closing: it stops
 *   leading on its own clock before its lease could be taken over, another replica leads within
 *   the lease time and applies the next commit, and the cut-off one sends nothing (counted at the
 *   sandbox), then or once the route is back.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { LeaseTable } from "../../src/fleet/lease-table.js";
import { doc } from "../helpers/plan.js";
import { dropTestSchemas, pgUrl, sql, testSchema } from "../helpers/postgres.js";
import { startReplica, untilWithLogs } from "../helpers/replica.js";
import type { Replica } from "../helpers/replica.js";
import { call, testCredentials, testSandbox } from "../helpers/sandbox.js";
import { tcpProxy } from "../helpers/tcp-proxy.js";
import type { TcpProxy } from "../helpers/tcp-proxy.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const lease = { durationMs: 3_000, renewMs: 500 };
/** What a loaded machine may add to a bound (two cores shared by several test runs). */
const slack = 1_500;
const replicas: Replica[] = [];
const sandboxes: SandboxHandle[] = [];
const proxies: TcpProxy[] = [];
const extraSchemas: string[] = [];

afterAll(async () => {
  for (const r of replicas) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGKILL");
  for (const s of sandboxes) await s.stop();
  for (const p of proxies) await p.stop();
  for (const s of extraSchemas.splice(0)) await sql(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  await dropTestSchemas();
  await removeTempRepos();
});

const until = untilWithLogs(replicas, 50);

const keys = (rate: number): string => [0, 1].map((i) => doc("OrgKey", `k${i}`, `keyId: k${i}\nrate: ${i === 0 ? rate : 10}`)).join("---\n");

/** A config of one environment, `solo`, on a PostgreSQL state with short leases. */
async function soloRepo(): Promise<{ dir: string; schema: string; box: SandboxHandle }> {
  const schema = testSchema();
  extraSchemas.push(`${schema}_solo`);
  const box = await testSandbox();
  sandboxes.push(box);
  const dir = await tempRepo({
    "config/keys.yaml": keys(10),
    "gatesync.yaml": `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
environments:
  solo:
    targets:
      gateway: { url: ${box.urls.gateway}, credentialEnv: GW_KEY }
state:
  backend: postgres
  urlEnv: DATABASE_URL
  schema: ${schema}
  lease: { duration: ${lease.durationMs}ms, renewEvery: ${lease.renewMs}ms }
schedule: { interval: 500ms, jitter: 0 }
server: { listen: "127.0.0.1:0" }
retries: { max: 2, baseDelayMs: 20, maxDelayMs: 100, timeoutMs: 5000 }
`,
  });
  return { dir, schema, box };
}

const replicaEnv = (databaseUrl = pgUrl): Record<string, string> => ({
  GATESYNC_LOG_LEVEL: "info",
  GW_KEY: testCredentials.gatewayKey,
  DATABASE_URL: databaseUrl,
});

interface FleetStatus {
  fleet: { leads: string[]; replicas: number; leases: Array<{ environment: string; leader: string | null }>; leaderless: string[]; ledTwice: string[] };
  environments: Array<{ environment: string; leader: string | null }>;
}
const status = async (r: Replica): Promise<FleetStatus> => (await call(`${r.url}/status`)).body as FleetStatus;
const leads = async (r: Replica): Promise<boolean> => ((await status(r).catch(() => undefined))?.fleet.leads ?? []).includes("solo");
/** A metric's value for environment solo in a replica's /metrics (undefined when absent). */
async function metric(r: Replica, name: string): Promise<number | undefined> {
  const text = (await call(`${r.url}/metrics`)).body as string;
  const line = text.split("\n").find((l) => l.startsWith(`${name}{environment="solo"}`));
  return line === undefined ? undefined : Number(line.split(" ").pop());
}
/** Writes (not GETs) the sandbox received for key `k`. */
const writesTo = (box: SandboxHandle, key: string): number =>
  box.inspect.calls().log.filter((c) => !c.internal && c.method !== "GET" && c.path.endsWith(`/${key}`)).length;
const rate = (box: SandboxHandle, key: string): unknown => box.inspect.store.orgKeys.get(key)?.session.rate;

/** Two replicas of `dir`, `first` started (and leading, its first commit applied) before the second. */
async function twoReplicas(dir: string, box: SandboxHandle, firstUrl = pgUrl): Promise<[Replica, Replica]> {
  const first = startReplica(replicas, "first", dir, replicaEnv(firstUrl));
  await until(() => first.url, Boolean, 60_000, "for the first to listen");
  await until(() => leads(first), Boolean, 30_000, "for the first to lead");
  await until(() => rate(box, "k1") === 10, Boolean, 30_000, "for the first apply");
  const second = startReplica(replicas, "second", dir, replicaEnv());
  await until(() => second.url, Boolean, 60_000, "for the second to listen");
  await until(
    async () => (await status(second)).fleet.replicas,
    (n) => n === 2,
    30_000,
    "for the second to see the fleet",
  );
  return [first, second];
}

/** Waits until a replica's session waits on a row lock to take a lease (its take is queued behind the lock). */
async function takeWaiting(r: Replica): Promise<void> {
  await until(
    async () =>
      (
        await sql(`SELECT 1 FROM pg_stat_activity WHERE wait_event_type = 'Lock' AND application_name LIKE $1 AND query LIKE '%acquired_at%'`, [
          `gatesync %:${r.child.pid}`,
        ])
      ).length,
    (n) => n > 0,
    30_000,
    "for a take to wait on the lock",
  );
}

/** For `ms`, every leader the table names (as /status of each replica reads it) leads there. */
async function expectTableTruthful(fleet: readonly Replica[], ms: number): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    const all = await Promise.all(fleet.map(status));
    const named = all.flatMap((s) => s.fleet.leases.filter((l) => l.environment === "solo").map((l) => l.leader));
    const leading = fleet.filter((_, i) => all[i]!.fleet.leads.includes("solo")).length;
    for (const n of named) if (n !== null) expect(leading, `the table names ${n}`).toBe(1);
    await sleep(100);
  }
}

/** A session holding the lease row of solo (SELECT … FOR UPDATE) until `release`. */
async function lockLeaseRow(schema: string): Promise<{ release: () => Promise<void> }> {
  const locker = new pg.Client({ connectionString: pgUrl });
  await locker.connect();
  await locker.query("BEGIN");
  await locker.query(`SELECT * FROM ${schema}.fleet_leases WHERE environment = 'solo' FOR UPDATE`);
  return {
    release: async () => {
      await locker.query("COMMIT");
      await locker.end();
    },
  };
}

describe("leases that cannot orphan an environment", () => {
  it("a take held past its timeout behind a row lock: once it is let go, the environment is led within the lease time by the replica the table names", async () => {
    const { dir, schema, box } = await soloRepo();
    const setup = new pg.Client({ connectionString: pgUrl });
    await setup.connect();
    await new LeaseTable(schema, lease.durationMs).prepare(setup, ["solo"]).finally(() => setup.end());
    const lock = await lockLeaseRow(schema);
    const r = startReplica(replicas, "only", dir, replicaEnv());
    await takeWaiting(r);
    await sleep(lease.durationMs / 2 + 200); // past the client's timeout of that take
    await lock.release();
    const releasedAt = Date.now();
    await until(() => leads(r), Boolean, lease.durationMs + slack, "for the replica to lead");
    console.log(`led ${Date.now() - releasedAt} ms after the row lock was let go (lease ${lease.durationMs} ms)`);
    await expectTableTruthful([r], 3_000);
    await until(() => rate(box, "k1") === 10, Boolean, 30_000, "for the first apply");
  }, 120_000);

  it("a renewal held past its timeout behind a row lock: nobody leads while it is held, and after it the environment is led within the lease time and applies the next commit", async () => {
    const { dir, schema, box } = await soloRepo();
    const fleet = await twoReplicas(dir, box);
    const [leader, standby] = fleet;
    const lock = await lockLeaseRow(schema);
    try {
      // the leader's renewals wait past their timeouts, the lease runs out, the standby's take waits too
      await takeWaiting(standby);
      await until(
        () => Promise.all(fleet.map(leads)),
        (l) => l.every((x) => !x),
        lease.durationMs,
        "for nobody to lead",
      );
      const said = await until(
        async () => {
          const s = await status(standby);
          return [s.environments[0]?.leader, await metric(standby, "gatesync_environment_leaderless"), s.fleet.leaderless, s.fleet.ledTwice];
        },
        ([who, leaderless]) => who === null && leaderless === 1,
        10_000,
        "for the standby to say nobody leads",
      );
      // /status says it at the fleet's level too: the environments nobody leads, none led twice
      expect(said).toEqual([null, 1, ["solo"], []]);
      await sleep(lease.durationMs / 2 + 200); // past the client's timeout of the take waiting now
    } finally {
      await lock.release();
    }
    const releasedAt = Date.now();
    await until(
      () => Promise.all(fleet.map(leads)),
      (l) => l.filter(Boolean).length === 1,
      lease.durationMs + slack,
      "for one replica to lead again",
    );
    console.log(`led again ${Date.now() - releasedAt} ms after the row lock was let go (lease ${lease.durationMs} ms)`);
    await expectTableTruthful(fleet, 3_000);
    expect(await Promise.all(fleet.map((r) => metric(r, "gatesync_environment_leaderless")))).toEqual([0, 0]);
    expect((await Promise.all(fleet.map(status))).map((s) => s.fleet.leaderless)).toEqual([[], []]);
    await writeFile(path.join(dir, "config/keys.yaml"), keys(55));
    await until(() => rate(box, "k0") === 55, Boolean, 30_000, "for the next commit");
    await sleep(1_500);
    expect([writesTo(box, "k0"), writesTo(box, "k1")]).toEqual([2, 1]);
    expect(leader.log + standby.log).not.toContain('"level":50');
  }, 180_000);

  it("a leader cut off from PostgreSQL without a reset stops before its lease could be taken; another leads within the lease time and applies the next commit; the cut-off one sends nothing", async () => {
    const { dir, box } = await soloRepo();
    const u = new URL(pgUrl);
    const proxy = await tcpProxy({ host: u.hostname, port: Number(u.port || 5432) });
    proxies.push(proxy);
    const [cutOff, other] = await twoReplicas(dir, box, proxy.through(pgUrl));
    const before = [writesTo(box, "k0"), writesTo(box, "k1")];
    expect(before).toEqual([1, 1]);
    proxy.cut();
    const cutAt = Date.now();
    await writeFile(path.join(dir, "config/keys.yaml"), keys(55));
    // on its own clock: /metrics answers from memory, whatever the database does
    const seen: { stopped?: number; taken?: number } = {};
    await until(
      async () => {
        if (seen.stopped === undefined && (await metric(cutOff, "gatesync_leader")) === 0) seen.stopped = Date.now();
        if (seen.taken === undefined && (await leads(other))) seen.taken = Date.now();
        return seen;
      },
      (s) => s.stopped !== undefined && s.taken !== undefined,
      lease.durationMs * 4,
      "for the cut-off one to stop and the other to lead",
    );
    console.log(`cut off from PostgreSQL: stopped leading after ${seen.stopped! - cutAt} ms, the other led after ${seen.taken! - cutAt} ms`);
    expect(seen.stopped!).toBeLessThanOrEqual(seen.taken!);
    expect(seen.taken! - cutAt).toBeLessThan(lease.durationMs + lease.renewMs + slack);
    await until(() => rate(box, "k0") === 55, Boolean, 30_000, "for the next commit, applied by the other");
    await sleep(1_500);
    expect([writesTo(box, "k0"), writesTo(box, "k1")]).toEqual([2, 1]);
    // the route comes back: the cut-off one rejoins as a standby and sends nothing more
    proxy.heal();
    await until(() => proxy.accepted() > 3, Boolean, 20_000, "for the cut-off one to reconnect");
    await sleep(3_000);
    expect([writesTo(box, "k0"), writesTo(box, "k1")]).toEqual([2, 1]);
    expect([await leads(cutOff), await leads(other)]).toEqual([false, true]);
    expect(cutOff.log).toContain("its lease lapsed (not renewed in time)");
  }, 180_000);
});
