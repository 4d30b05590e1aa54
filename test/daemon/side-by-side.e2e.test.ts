/**
 * One daemon's environments run side by side (issue 45): a slow gateway holds back only its own
 * environment's commit; never more environments run at once than limits.concurrentEnvironments
 * (1: they take turns); two environments on one gateway keep its rate limit together; and a run
 * reads exactly the commit it reports, however many commits are pushed while runs load.
 * Real daemon, real sandboxes over HTTP, a real git repository.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Plan } from "../../src/plan/plan.js";
import { fieldChanges } from "../../src/plan/plan-change.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { testSandbox } from "../helpers/sandbox.js";
import type { SideBySide } from "../helpers/side-by-side.js";
import { mostAtOnce, orgKeys, sideBySide } from "../helpers/side-by-side.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

const sandboxes: SandboxHandle[] = [];
let running: SideBySide | undefined;

async function sandbox(): Promise<SandboxHandle> {
  const s = await testSandbox();
  sandboxes.push(s);
  return s;
}

/** What a gateway received from clients (not the sandbox's own batch sub-requests). */
const received = (s: SandboxHandle): ReturnType<SandboxHandle["inspect"]["calls"]>["log"] =>
  s.inspect.calls().log.filter((c) => !c.internal && c.interface === "gateway");

afterEach(async () => {
  await running?.stop();
  running = undefined;
});

afterAll(async () => {
  for (const s of sandboxes) await s.stop();
  await removeTempRepos();
});

describe("a slow environment", () => {
  it("applies a commit to the environment whose gateway answers at once while the slow one's gateway still holds its calls", async () => {
    const slow = await sandbox();
    const fast = await sandbox();
    // the slow environment is listed (and triggered) first: taking turns, it would hold the fast one back
    running = await sideBySide(
      [
        { name: "slow", gateway: slow, values: { prefix: "slow" } },
        { name: "fast", gateway: fast, values: { prefix: "fast" } },
      ],
      2,
      orgKeys(3, 5),
    );
    const latencyMs = 6_000;
    slow.inspect.setFaults({ latencyMs, interfaces: ["gateway"] });
    const commit = await running.push(orgKeys(3, 6), "rate 6");
    const asked = Date.now();
    await running.sync();
    await running.ranCommit(commit, ["fast"], 30_000);
    const fastRun = running.daemon.environments.get("fast")!.lastRun!;
    expect(fastRun.result).toBe("applied");
    // the slow environment's run of the same commit is still waiting for its gateway
    expect(running.daemon.environments.get("slow")!.lastRun?.commit).not.toBe(commit);
    expect(Date.parse(fastRun.finishedAt) - asked).toBeLessThan(latencyMs);
    await running.ranCommit(commit, ["slow"], 60_000);
    expect(running.daemon.environments.get("slow")!.lastRun!.result).toBe("applied");
  }, 90_000);
});

describe("the bound on environments running at once", () => {
  for (const bound of [1, 2]) {
    it(`never runs more than limits.concurrentEnvironments = ${bound} environments at once, and runs that many`, async () => {
      const gateways = [await sandbox(), await sandbox(), await sandbox()];
      // every call takes a while: three environments starting together overlap unless held apart
      for (const g of gateways) g.inspect.setFaults({ latencyMs: 700, interfaces: ["gateway"] });
      running = await sideBySide(
        gateways.map((gateway, i) => ({ name: `env-${i}`, gateway, values: { prefix: `env-${i}` } })),
        bound,
        orgKeys(2, 5),
      );
      const reports = running.runs.map((r) => r.report);
      expect(reports.length).toBeGreaterThanOrEqual(3);
      expect(mostAtOnce(reports)).toBe(bound);
    }, 90_000);
  }
});

describe("what environments side by side share", () => {
  it("keeps one gateway's rate limit for two environments sending to it at once", async () => {
    const shared = await sandbox();
    // the gateway's own limit: 10 requests a second, 10 at once at most; over it, 429
    shared.inspect.setFaults({ rateLimit: { requestsPerSecond: 10, burst: 10 }, interfaces: ["gateway"] });
    const rateLimit = "{ requestsPerSecond: 10 }";
    running = await sideBySide(
      [
        { name: "blue", gateway: shared, values: { prefix: "blue" }, rateLimit },
        { name: "green", gateway: shared, values: { prefix: "green" }, rateLimit },
      ],
      2,
      orgKeys(20, 5),
    );
    const calls = received(shared);
    const writes = calls.filter((c) => c.method !== "GET");
    expect(writes.length).toBeGreaterThanOrEqual(40);
    // both environments sent in the same seconds: the limit was shared, not taken in turns
    expect(mostAtOnce(running.runs.map((r) => r.report))).toBe(2);
    expect(calls.filter((c) => c.status === 429)).toEqual([]);
    // as the gateway counts at arrival (10 a second, 10 at once): any span of arrivals holds at most 10 + 10 a second of it
    const times = calls.map((c) => c.startedAt).sort((a, b) => a - b);
    const over = times.flatMap((t, i) => times.slice(i).flatMap((u, k) => (k + 1 > 10 + (10 * (u - t)) / 1000 ? [{ from: t, to: u, arrivals: k + 1 }] : [])));
    expect(over).toEqual([]);
  }, 90_000);
});

describe("what each run reads", () => {
  it("reads exactly the commit each run reports while commits are pushed as runs load", async () => {
    const gateways = [await sandbox(), await sandbox(), await sandbox()];
    const keys = 200;
    const rateLimit = "{ requestsPerSecond: 5000, concurrency: 32 }";
    const names = ["env-0", "env-1", "env-2"];
    running = await sideBySide(
      gateways.map((gateway, i) => ({ name: names[i]!, gateway, values: { prefix: names[i]! }, rateLimit })),
      3,
      orgKeys(keys, 1),
    );
    const rateOf = new Map<string, number>();
    let last = "";
    for (let rate = 2; rate <= 13; rate++) {
      last = await running.push(orgKeys(keys, rate), `rate ${rate}`);
      rateOf.set(last, rate);
      // one environment after another: each one's fetch may come while another reads its files
      for (const name of names) {
        await running.sync(name);
        await sleep(40);
      }
    }
    await running.ranCommit(last, names, 120_000);
    const pushed = running.runs.filter((r) => r.report.commit !== undefined && rateOf.has(r.report.commit));
    expect(pushed.map((r) => r.report.result).filter((result) => result !== "applied" && result !== "noop")).toEqual([]);
    expect(mostAtOnce(pushed.map((r) => r.report))).toBeGreaterThanOrEqual(2);
    const ratesOf = (plan: Plan | undefined): unknown[] =>
      (plan?.changes ?? []).flatMap((c) =>
        fieldChanges(c)
          .filter((f) => f.path === "rate")
          .map((f) => f.after),
      );
    // the runs changed every key: what is checked below is there to check
    expect(pushed.filter((r) => ratesOf(r.plan).length === keys).length).toBeGreaterThanOrEqual(3);
    for (const { report, plan } of pushed) {
      const rates = ratesOf(plan);
      // every key of the commit at the commit's rate (or none: a re-run found nothing to change): no file read from another commit
      const seen = { commit: report.commit, rates: rates.length, otherRates: rates.filter((r) => r !== rateOf.get(report.commit!)) };
      expect(seen).toEqual({ commit: report.commit, rates: rates.length === 0 ? 0 : keys, otherRates: [] });
    }
  }, 180_000);
});
