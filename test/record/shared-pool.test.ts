/**
 * One PostgreSQL pool per process and database (src/record/postgres/shared-pool.ts): however many
 * environments' states a process opens, its sessions stay within the pool's size; a wait past the
 * acquire deadline is STATE_POOL_TIMEOUT naming the environment and what it was doing; a state
 * lock on a pooled connection is given back before the connection is pooled again.
 */
import { randomBytes } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { ErrorCode } from "../../src/errors.js";
import { PostgresStateBackend } from "../../src/record/postgres/postgres-backend.js";
import { openPoolCount } from "../../src/record/postgres/shared-pool.js";
import { postgresConnection } from "../../src/record/open-backend.js";
import path from "node:path";
import { loadConfig } from "../../src/config/config.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { dropTestSchemas, pgUrl, sql, testSchema } from "../helpers/postgres.js";

afterAll(dropTestSchemas);

const appName = (): string => `gs-pool-test ${randomBytes(4).toString("hex")}`;

const sessionsOf = async (name: string): Promise<number> =>
  Number((await sql<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE application_name = $1", [name]))[0]!.n);

describe("the shared PostgreSQL pool", () => {
  it("takes its size from state.pool whichever backend of the database opens it first (the ownership registry included)", async () => {
    const dir = await tempRepo({
      "config/.keep": "",
      "gatesync.yaml": `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets: { gateway: { url: http://127.0.0.1:9, credentialEnv: GW_KEY } }
state: { backend: postgres, urlEnv: DATABASE_URL, schema: s, pool: { size: 3, acquireTimeout: 5s } }
`,
    });
    const config = await loadConfig(path.join(dir, "gatesync.yaml"));
    const registryFirst = new PostgresStateBackend({
      ...postgresConnection(config, { DATABASE_URL: pgUrl }),
      schema: testSchema(),
      applicationName: appName(),
    });
    expect(registryFirst.connections.settings.size).toBe(3);
    await registryFirst.close();
    await removeTempRepos();
  });

  it("keeps 30 environments' states, reading, writing history and locking at once, within the pool's 4 sessions", async () => {
    const name = appName();
    const before = openPoolCount();
    const states = Array.from(
      { length: 30 },
      (_, i) =>
        new PostgresStateBackend({ url: pgUrl, schema: testSchema(), applicationName: name, user: `environment e${i}`, pool: { size: 4, acquireMs: 30_000 } }),
    );
    expect(openPoolCount()).toBe(before + 1);
    let peak = 0;
    const sampler = setInterval(() => void sessionsOf(name).then((n) => (peak = Math.max(peak, n))), 20);
    try {
      await Promise.all(
        states.map(async (s, i) => {
          await s.migrate();
          const lock = await s.lock(`test ${i}`);
          await s.initialise(undefined);
          await Promise.all([s.read(), s.readHistory({ kind: "run", limit: 5 }), s.readVersion()]);
          await lock.release();
          await s.read();
        }),
      );
      peak = Math.max(peak, await sessionsOf(name));
    } finally {
      clearInterval(sampler);
      await Promise.all(states.map((s) => s.close()));
    }
    expect(peak).toBeGreaterThan(0);
    expect(peak).toBeLessThanOrEqual(4);
    expect(openPoolCount()).toBe(before);
  }, 120_000);

  it("says which environment waited too long for a connection, and for what", async () => {
    const name = appName();
    const settings = { size: 2, acquireMs: 300 };
    const staging = new PostgresStateBackend({ url: pgUrl, schema: testSchema(), applicationName: name, user: "environment staging", pool: settings });
    const production = new PostgresStateBackend({ url: pgUrl, schema: testSchema(), applicationName: name, user: "environment production", pool: settings });
    try {
      await staging.migrate();
      const lock = await staging.lock("test");
      // production's one read place (a share of 1 in a pool of 2) held: every other connection is the lock's
      const held = await production.connections.connect("environment production", "hold a connection");
      const t0 = performance.now();
      const err = (await staging.read().catch((e: unknown) => e)) as { code?: string; message?: string; location?: { path?: string } };
      expect(performance.now() - t0).toBeLessThan(5_000);
      expect(err.code).toBe(ErrorCode.STATE_POOL_TIMEOUT);
      expect(err.message).toContain("environment staging: no PostgreSQL connection within 300 ms to read the state");
      expect(err.message).toContain("pool of 2: 2 in use, 1 held by state locks");
      expect(err.location?.path).toBe("state.pool");
      held.release();
      // freed: the same read now goes through
      await expect(staging.read()).resolves.toBeDefined();
      await lock.release();
    } finally {
      await staging.close();
      await production.close();
    }
  }, 60_000);

  it("gives a state lock back before its connection is pooled again: the next holder takes it at once", async () => {
    const schema = testSchema();
    const mine = new PostgresStateBackend({ url: pgUrl, schema, applicationName: appName(), pool: { size: 2, acquireMs: 5_000 } });
    const other = new PostgresStateBackend({ url: pgUrl, schema, applicationName: appName() });
    try {
      await mine.migrate();
      const first = await mine.lock("first");
      await expect(other.lock("other")).rejects.toMatchObject({ code: ErrorCode.STATE_LOCKED });
      await first.release();
      // the connection that held it is idle in the pool now, and holds nothing
      const second = await other.lock("other");
      await second.release();
      const again = await mine.lock("again");
      await again.release();
    } finally {
      await mine.close();
      await other.close();
    }
  }, 60_000);
});

describe("a pooled session ended while in use", () => {
  it("fails the statement under way, not the process (a takeover ends a replica's sessions: 57P01)", async () => {
    const name = appName();
    const state = new PostgresStateBackend({ url: pgUrl, schema: testSchema(), applicationName: name, user: "environment e1" });
    try {
      await state.migrate();
      const held = await state.connections.connect("environment e1", "sleep");
      const sleeping = held.client.query("SELECT pg_sleep(30)").catch((e: unknown) => e);
      await sql("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1 AND query LIKE 'SELECT pg_sleep%'", [name]);
      expect(((await sleeping) as { code?: string }).code).toBe("57P01");
      // emitted after the rejection: an unheard 'error' event would have thrown by now
      await new Promise((resolve) => setTimeout(resolve, 200));
      held.release(true);
      await expect(state.read()).resolves.toBeDefined();
    } finally {
      await state.close();
    }
  }, 60_000);
});
