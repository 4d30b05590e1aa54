/**
 * One dropped PostgreSQL connection (a database restart, a fail-over, an idle timeout) once
 * froze the state for the life of the process: the write group whose BEGIN failed was never
 * closed, so every later write joined it and got its old rejection without touching the
 * database — each run re-sent updates, recorded nothing, and stayed "partial". Now the run
 * whose lock connection is terminated stops cleanly (STATE_LOCK_LOST: nothing more sent) and
 * the next run takes the lock on a new connection and records everything.
 */
import { afterAll, describe, expect, it } from "vitest";
import { harness } from "../helpers/apply.js";
import { doc } from "../helpers/plan.js";
import { dropTestSchemas, postgresBackend, sql, testSchema } from "../helpers/postgres.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import type { ResourceRecord } from "../../src/record/state.js";
import { heldPayload } from "../../src/record/wrappers/lazy-record.js";

afterAll(async () => {
  await dropTestSchemas();
  await removeTempRepos();
});

const record = (name: string): ResourceRecord => ({
  id: `OrgKey/${name}`,
  kind: "OrgKey",
  name,
  address: { keyID: name },
  applied: heldPayload({ rate: 1 }),
  status: "applied",
  createdAt: "2026-11-21T00:00:00.000Z",
  updatedAt: "2026-11-21T00:00:00.000Z",
});

const terminateLockSession = async (schema: string): Promise<void> => {
  await sql(`SELECT pg_terminate_backend(pid) FROM pg_locks WHERE locktype = 'advisory' AND objid = 1 AND classid = hashtext($1)::oid`, [schema]);
};

describe("a terminated lock connection", () => {
  it("fails the writes of that lock, then the next lock writes again", async () => {
    const schema = testSchema();
    const a = postgresBackend(schema);
    try {
      const first = await a.lock("writer");
      await a.write(record("before"));
      await terminateLockSession(schema);
      await expect(a.write(record("lost"))).rejects.toMatchObject({ code: expect.stringMatching(/^STATE_(LOCK_LOST|IO)$/) as string });
      await expect(a.write(record("lost-too"))).rejects.toMatchObject({ code: "STATE_LOCK_LOST" });
      expect(() => first.check()).toThrow(/no longer holds the state lock/);
      await first.release();
      const t0 = performance.now();
      const second = await a.lock("writer again");
      await a.write(record("after"));
      const recoveredMs = performance.now() - t0;
      second.check();
      await second.release();
      expect([...(await a.read()).resources.keys()].sort()).toEqual(["OrgKey/after", "OrgKey/before"]);
      expect(recoveredMs).toBeLessThan(5000);
    } finally {
      await a.close();
    }
  });

  it("in an apply: the run stops cleanly, sends nothing more, and the next run applies and records everything", async () => {
    const files = Object.fromEntries(Array.from({ length: 8 }, (_, i) => [`k${i}.yaml`, doc("OrgKey", `k${i}`, `keyId: k${i}`)]));
    const h = await harness({ files, batch: false, rate: "{ concurrency: 1, requestsPerSecond: 4 }" });
    const schema = testSchema();
    const state = postgresBackend(schema);
    try {
      const sends = (): number => h.sandbox.inspect.calls().log.filter((c) => c.method !== "GET" && !c.internal).length;
      const run = h.apply({ state });
      for (let i = 0; i < 2000 && sends() < 2; i++) await new Promise((resolve) => setTimeout(resolve, 5));
      await terminateLockSession(schema);
      const { summary } = await run;
      const sentInFirst = sends();
      expect(summary.stateFailure?.code).toBe("STATE_LOCK_LOST");
      expect(summary.applied.length).toBeLessThan(8);
      expect(sentInFirst).toBeLessThan(8);
      const t0 = performance.now();
      const next = await h.apply({ state });
      const recoveredMs = performance.now() - t0;
      expect(next.summary.stateFailure).toBeUndefined();
      expect(next.summary.failed).toEqual([]);
      expect(next.summary.inDoubt).toEqual([]);
      const recorded = await state.read();
      expect([...recorded.resources.values()].filter((r) => r.status === "applied")).toHaveLength(8);
      console.log(`recovered: next run applied and recorded ${8 - summary.applied.length} in ${Math.round(recoveredMs)} ms`);
    } finally {
      await state.close();
      await h.stop();
    }
  }, 60_000);
});
