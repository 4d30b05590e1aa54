/**
 * Two replicas of `gatesync run` of a config without `environments:` on one PostgreSQL state
 * lead its one environment through the fleet's lease (real processes, real PostgreSQL, one
 * sandbox whose calls are counted). A leader frozen mid-apply (SIGSTOP: a paused VM) loses the
 * environment within the lease's time, the standby applies the next commit, and the frozen one,
 * resumed, sends nothing; a leader stopped (SIGTERM) mid-apply lets its call in flight settle and
 * gives the lease back, so the other leads within a second and finishes the commit — each key
 * written once, none lost, none twice.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { doc } from "../helpers/plan.js";
import { dropTestSchemas, pgUrl, testSchema } from "../helpers/postgres.js";
import { call, testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { startReplica, untilWithLogs } from "../helpers/replica.js";
import type { Replica } from "../helpers/replica.js";

/** The lease's time and its renewal (FleetLeases' defaults). */
const leaseMs = 5_000;
const renewMs = 1_000;
const keyCount = 8;

let sandbox: SandboxHandle;
let dir: string;
const replicas: Replica[] = [];

const dump = (): string => replicas.map((r) => `--- ${r.name}\n${r.log.slice(-2500)}`).join("\n");

const until = untilWithLogs(replicas, 50);

/** `keyCount` org keys at `rate`. */
const keys = (rate: number): string => Array.from({ length: keyCount }, (_, i) => doc("OrgKey", `k${i}`, `keyId: k${i}\nrate: ${rate}`)).join("---\n");
const writeKeys = (rate: number): Promise<void> => writeFile(path.join(dir, "config/keys.yaml"), keys(rate));

const replicaEnv = (): Record<string, string> => ({
  GATESYNC_LOG_LEVEL: "info",
  GW_KEY: testCredentials.gatewayKey,
  DATABASE_URL: pgUrl,
});

const role = async (r: Replica): Promise<string | undefined> =>
  ((await call(`${r.url}/status`).catch(() => undefined))?.body as { role?: string } | undefined)?.role;
/** Writes (not reads) the sandbox received, all keys together or of key `k`. */
const writes = (key?: string): number =>
  sandbox.inspect.calls().log.filter((c) => !c.internal && c.method !== "GET" && (key === undefined || c.path.endsWith(`/${key}`))).length;
const perKey = (): number[] => Array.from({ length: keyCount }, (_, i) => writes(`k${i}`));
const rates = (): unknown[] => Array.from({ length: keyCount }, (_, i) => sandbox.inspect.store.orgKeys.get(`k${i}`)?.session.rate);
const allAt = (rate: number): boolean => rates().every((r) => r === rate);

async function leaderAndStandby(): Promise<{ leader: Replica; standby: Replica }> {
  const live = replicas.filter((r) => r.child.exitCode === null && r.child.signalCode === null);
  const roles = await until(
    () => Promise.all(live.map(role)),
    (xs) => xs.filter((x) => x === "leader").length === 1 && xs.filter((x) => x === "standby").length === live.length - 1,
    30_000,
    "for one leader",
  );
  return { leader: live[roles.indexOf("leader")]!, standby: live[roles.indexOf("standby")]! };
}

beforeAll(async () => {
  sandbox = await testSandbox();
  const schema = testSchema();
  dir = await tempRepo({
    "config/keys.yaml": keys(10),
    // 4 requests per second, one at a time: an apply of 8 keys takes 2 s, long enough to stop it midway
    "gatesync.yaml": `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY, rateLimit: { concurrency: 1, requestsPerSecond: 4 } }
state: { backend: postgres, urlEnv: DATABASE_URL, schema: ${schema} }
schedule: { interval: 500ms, jitter: 0 }
server: { listen: "127.0.0.1:0" }
retries: { max: 2, baseDelayMs: 20, maxDelayMs: 100, timeoutMs: 5000 }
`,
  });
  startReplica(replicas, "a", dir, replicaEnv());
  startReplica(replicas, "b", dir, replicaEnv());
  await until(() => replicas.every((r) => r.url !== undefined), Boolean, 60_000, "for both to listen");
  await until(() => allAt(10), Boolean, 60_000, "for the first apply");
}, 90_000);

afterAll(async () => {
  for (const r of replicas) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGKILL");
  await sandbox.stop();
  await dropTestSchemas();
  await removeTempRepos();
});

describe("replicas of one environment on a PostgreSQL state lead it through a lease", () => {
  it("a leader frozen mid-apply (SIGSTOP) loses the environment within the lease's time; the standby applies the next commit; resumed, the frozen one sends nothing", async () => {
    const { leader, standby } = await leaderAndStandby();
    const start = writes();
    await writeKeys(30);
    await until(writes, (n) => n >= start + 2, 30_000, "for the first updates");
    process.kill(leader.child.pid!, "SIGSTOP");
    const stoppedAt = Date.now();
    try {
      await writeKeys(40);
      await until(
        () => role(standby),
        (r) => r === "leader",
        30_000,
        "for the standby to lead",
      );
      const ledMs = Date.now() - stoppedAt;
      await until(() => allAt(40), Boolean, 30_000, "for the next commit at the new leader");
      console.log(`single environment, SIGSTOP of the leader: the standby led after ${ledMs} ms, applied the next commit after ${Date.now() - stoppedAt} ms`);
      // the lease ran out at most its time after the last renewal, seen at the standby's next round
      expect(ledMs).toBeLessThan(leaseMs + renewMs + 1_000);
    } finally {
      process.kill(leader.child.pid!, "SIGCONT");
    }
    const afterTakeover = writes();
    await sleep(4_000); // the resumed replica's timers, its queued calls and several loop intervals
    expect(writes(), dump()).toBe(afterTakeover);
    expect(allAt(40)).toBe(true);
    expect(leader.log).toMatch(/lease (lost|lapsed)|no longer leads environment/);
    await until(
      () => role(leader),
      (r) => r === "standby",
      10_000,
      "for the resumed one to be a standby",
    );
  }, 90_000);

  it("a leader stopped mid-apply (SIGTERM) lets its call settle and hands over: the other leads within 1 s and each key is written once", async () => {
    const { leader, standby } = await leaderAndStandby();
    const before = perKey();
    const start = writes();
    await writeKeys(50);
    await until(writes, (n) => n >= start + 2, 30_000, "for the first updates");
    const exited = new Promise<number | null>((resolve) => leader.child.once("close", resolve));
    leader.child.kill("SIGTERM");
    const termAt = Date.now();
    await until(
      () => role(standby),
      (r) => r === "leader",
      10_000,
      "for the other to lead",
    );
    const ledMs = Date.now() - termAt;
    await until(() => allAt(50), Boolean, 30_000, "for the commit to be finished by the new leader");
    console.log(`single environment, SIGTERM of the leader mid-apply: the other led after ${ledMs} ms, the commit finished after ${Date.now() - termAt} ms`);
    expect(await exited).toBe(0);
    expect(ledMs).toBeLessThan(1_000);
    await sleep(2_000); // several more loop intervals
    // none lost (every key at 50), none twice: one write per key for this commit
    expect(perKey().map((n, i) => n - before[i]!)).toEqual(Array.from({ length: keyCount }, () => 1));
    expect(leader.log).toContain("stopping: no new calls; waiting for calls in flight");
  }, 90_000);
});
