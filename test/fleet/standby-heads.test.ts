/**
 * A standby follows every environment it does not lead with one statement per interval
 * (src/daemon/environments/standby-heads.ts), not one history read and one version read per
 * environment: 40 environments' states on the PostgreSQL of this machine, their standby views
 * asked for /status (fresh) and a standby turn after each round, every statement counted.
 */
import { afterAll, describe, expect, it } from "vitest";
import { defaultHistoryBound } from "../../src/config/history-section.js";
import { RunHistory } from "../../src/daemon/history/run-history.js";
import { StandbyHeads, headsStatement } from "../../src/daemon/environments/standby-heads.js";
import type { FollowedEnvironment } from "../../src/daemon/environments/standby-heads.js";
import { CachedState } from "../../src/daemon/views/cached-state.js";
import { openSharedPool } from "../../src/record/postgres/shared-pool.js";
import type { SharedPool } from "../../src/record/postgres/shared-pool.js";
import type { PostgresStateBackend } from "../../src/record/postgres/postgres-backend.js";
import type { HistoryQuery } from "../../src/record/history/history.js";
import type { RunReport } from "../../src/run/run-report.js";
import { silentLogger } from "../../src/logger.js";
import { dropTestSchemas, pgUrl, postgresBackend } from "../helpers/postgres.js";
import { leaderRunView } from "../helpers/run-view.js";

const n = 40;

function report(i: number): RunReport {
  const at = new Date(Date.UTC(2026, 11, 3, 0, i)).toISOString();
  return { reason: "webhook", startedAt: at, finishedAt: at, durationMs: 10, result: "applied", revision: `r${i}`, commit: i.toString(16).padStart(40, "0") };
}

/** The environment's state, its rows read by a standby's view (each read counted), and its version view (each read counted). */
interface Followed {
  readonly name: string;
  readonly state: PostgresStateBackend;
  readonly view: RunHistory;
  readonly versions: CachedState;
  readonly reads: { history: number; version: number };
}

function followed(name: string, state: PostgresStateBackend): Followed {
  const reads = { history: 0, version: 0 };
  const store = {
    appendHistory: state.appendHistory.bind(state),
    readHistory: (q: HistoryQuery) => {
      reads.history++;
      return state.readHistory(q);
    },
  };
  const view = new RunHistory({
    store,
    bound: () => defaultHistoryBound,
    replica: "standby",
    follows: () => true,
    syncedHere: () => false,
    onError: (err) => {
      throw err;
    },
    // a /status always asks for a read of its own when nothing else said the copy stands
    freshMs: 0,
  });
  const versioned = {
    read: () => state.read(),
    readVersion: () => {
      reads.version++;
      return state.readVersion();
    },
    description: state.description,
  };
  return {
    name,
    state,
    view,
    versions: new CachedState(
      versioned,
      () => "0",
      () => 0,
    ),
    reads,
  };
}

/** The shared pool, every statement sent through it counted. */
function countingPool(pool: SharedPool, counted: { statements: number }): SharedPool {
  return {
    with: (user: string, doing: string, work: (c: never) => Promise<unknown>) =>
      pool.with(user, doing, (client) => {
        const query = (...args: unknown[]): unknown => {
          counted.statements++;
          return (client.query as (...a: unknown[]) => unknown)(...args);
        };
        return work({ query } as never);
      }),
    close: () => pool.close(),
  } as unknown as SharedPool;
}

describe("a standby following many environments", () => {
  afterAll(dropTestSchemas);

  it("reads every environment's head in one statement per round, and an environment's rows only when its head moved", async () => {
    const envs: Followed[] = [];
    for (let i = 0; i < n; i++) {
      const state = postgresBackend();
      const leader = leaderRunView(state);
      leader.runFinished(report(i), undefined);
      await leader.settled();
      envs.push(followed(`e${i}`, state));
    }
    for (const e of envs) {
      e.view.start();
      await e.view.settled();
    }
    const counted = { statements: 0 };
    const environments: FollowedEnvironment[] = envs.map((e) => ({
      name: e.name,
      schema: e.state.description.replace("postgres schema ", ""),
      leads: () => false,
      onHead: (head, validMs) => {
        e.versions.noteVersion(head.version, validMs);
        return e.view.followHead(head.run, validMs);
      },
    }));
    const heads = new StandbyHeads([{ pool: countingPool(openSharedPool({ url: pgUrl }), counted), environments }], silentLogger(), 1_000);
    const asked = async (): Promise<void> => {
      for (const e of envs) {
        await e.view.fresh();
        e.view.runFinished({ ...report(0), result: "standby" }, undefined);
        await e.versions.version();
      }
      await Promise.all(envs.map((e) => e.view.settled()));
    };
    const readsNow = (): number => envs.reduce((sum, e) => sum + e.reads.history + e.reads.version, 0);
    try {
      const before = readsNow();
      for (let round = 0; round < 3; round++) {
        await heads.round();
        await asked();
      }
      // 3 rounds of 40 environments: 3 statements, not 3 × 40 × 2 reads
      expect(counted.statements).toBe(3);
      expect(readsNow() - before).toBe(0);
      expect(envs[7]!.view.newest()?.record.revision).toBe("r7");

      // the leader of e7 finishes a run: the next round reads e7's rows, and only e7's
      const leader = leaderRunView(envs[7]!.state);
      leader.start();
      await leader.settled();
      leader.runFinished(report(107), undefined);
      await leader.settled();
      await heads.round();
      await asked();
      expect(counted.statements).toBe(4);
      expect(envs.map((e) => e.reads.history - 1)).toEqual(envs.map((_, i) => (i === 7 ? 1 : 0)));
      expect(envs[7]!.view.newest()?.record.revision).toBe("r107");
    } finally {
      await heads.stop();
      for (const e of envs) await e.state.close();
    }
  }, 60_000);

  it("is one statement for any number of environments: one branch per environment, its name a parameter", () => {
    const st = headsStatement([
      { name: "staging", schema: "gs_staging" },
      { name: "prod", schema: "gs_prod" },
    ]);
    expect(st.values).toEqual(["staging", "prod"]);
    expect(st.text.split("UNION ALL")).toHaveLength(2);
    expect(st.text).toContain('"gs_prod".history');
  });
});
