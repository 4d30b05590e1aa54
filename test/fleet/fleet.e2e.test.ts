/**
 * Fleets: replicas of `gatesync run` (real processes) on one PostgreSQL database share the
 * environments of one config, one sandbox per environment. Every environment is applied exactly
 * once per change (counted at its sandbox), never by two replicas at once, and moves to a live
 * replica when its leader is killed (SIGKILL) or paused (SIGSTOP); the paused one, resumed,
 * sends nothing more for the environments it lost. Failover times are printed (docs/user/fleets.md).
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { doc } from "../helpers/plan.js";
import { dropTestSchemas, pgUrl, sql, testSchema } from "../helpers/postgres.js";
import { call, testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { startReplica, untilWithLogs } from "../helpers/replica.js";
import type { Replica } from "../helpers/replica.js";

interface FleetStatus {
  role: string;
  fleet: { replica: string; replicas: number; leads: string[]; leases: Array<{ environment: string; leader: string | null; token: number }> };
  environments: Array<{ environment: string; leader: string | null; role: string; synced: boolean }>;
}

const replicas: Replica[] = [];
const sandboxes: SandboxHandle[] = [];
const envSchemas: string[] = [];

afterAll(async () => {
  for (const r of replicas) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGKILL");
  for (const s of sandboxes) await s.stop();
  for (const s of envSchemas.splice(0)) await sql(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  await dropTestSchemas();
  await removeTempRepos();
});

const until = untilWithLogs(replicas);

/** `n` org keys at `rate`, key k0 at `first` when given. */
const keys = (n: number, rate: number, first = rate): string =>
  Array.from({ length: n }, (_, i) => doc("OrgKey", `k${i}`, `keyId: k${i}\nrate: ${i === 0 ? first : rate}`)).join("---\n");

/** A config of one environment per sandbox, on a PostgreSQL state. */
async function fleetRepo(envs: readonly string[], rate: string, keyCount: number): Promise<{ dir: string; schema: string }> {
  const schema = testSchema();
  envSchemas.push(...envs.map((e) => `${schema}_${e}`));
  const boxes: SandboxHandle[] = [];
  for (let i = 0; i < envs.length; i++) boxes.push(await testSandbox());
  sandboxes.push(...boxes);
  const environments = envs
    .map((e, i) => `  ${e}:\n    targets:\n      gateway: { url: ${boxes[i]!.urls.gateway}, credentialEnv: GW_KEY, rateLimit: ${rate} }\n`)
    .join("");
  const dir = await tempRepo({
    "config/keys.yaml": keys(keyCount, 10),
    "gatesync.yaml": `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: http://127.0.0.1:9, credentialEnv: GW_KEY }
environments:
${environments}state: { backend: postgres, urlEnv: DATABASE_URL, schema: ${schema} }
schedule: { interval: 500ms, jitter: 0 }
server: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN }
retries: { max: 2, baseDelayMs: 20, maxDelayMs: 100, timeoutMs: 5000 }
`,
  });
  return { dir, schema };
}

const replicaEnv = (): Record<string, string> => ({
  GATESYNC_LOG_LEVEL: "info",
  GW_KEY: testCredentials.gatewayKey,
  DATABASE_URL: pgUrl,
  SYNC_TOKEN: syncToken,
});

const syncToken = "fleet-sync-token";

/** The environments a replica's log says it ran for `reason`, each once. */
const ranFor = (r: Replica, reason: string): string[] => [
  ...new Set(
    r.log
      .split("\n")
      .filter((l) => l.includes('"msg":"run started"') && l.includes(`"reason":"${reason}"`))
      .map((l) => /"environment":"([^"]+)"/.exec(l)?.[1] ?? "?"),
  ),
];

const status = async (r: Replica): Promise<FleetStatus> => (await call(`${r.url}/status`)).body as FleetStatus;

/** Writes (not GETs) a sandbox received for key `k`. */
const writesTo = (box: SandboxHandle, key: string): number =>
  box.inspect.calls().log.filter((c) => !c.internal && c.method !== "GET" && c.path.endsWith(`/${key}`)).length;
const rates = (box: SandboxHandle, n: number): unknown[] => Array.from({ length: n }, (_, i) => box.inspect.store.orgKeys.get(`k${i}`)?.session.rate);

/**
 * Samples which environments each live replica says it leads, every 100 ms, and records any
 * environment two replicas claimed in the same round.
 */
function watchForTwoLeaders(fleet: readonly Replica[]): { stop: () => Promise<string[]> } {
  const doubles: string[] = [];
  let on = true;
  const loop = (async () => {
    while (on) {
      const live = fleet.filter((r) => r.child.exitCode === null && r.child.signalCode === null && !paused.has(r));
      const claims = await Promise.all(live.map(async (r) => (await status(r).catch(() => undefined))?.fleet.leads ?? []));
      const seen = new Set<string>();
      for (const e of claims.flat()) {
        if (seen.has(e)) doubles.push(e);
        else seen.add(e);
      }
      await sleep(100);
    }
  })();
  return {
    stop: async () => {
      on = false;
      await loop;
      return doubles;
    },
  };
}
const paused = new Set<Replica>();

describe("a fleet of two replicas", () => {
  const envs = ["e1", "e2", "e3", "e4"];
  let dir: string;
  let a: Replica;
  let b: Replica;

  it("splits the environments between them and applies each exactly once per change, never by both at once", async () => {
    ({ dir } = await fleetRepo(envs, "{ concurrency: 8, requestsPerSecond: 1000 }", 2));
    a = startReplica(replicas, "a", dir, replicaEnv());
    b = startReplica(replicas, "b", dir, replicaEnv());
    await until(() => a.url !== undefined && b.url !== undefined, Boolean, 60_000, "for both to listen");
    const watch = watchForTwoLeaders([a, b]);
    const split = await until(
      async () => [(await status(a)).fleet.leads.length, (await status(b)).fleet.leads.length],
      ([x, y]) => x === 2 && y === 2,
      30_000,
      "for a 2/2 split",
    );
    expect(split).toEqual([2, 2]);
    await until(() => sandboxes.slice(-4).every((s) => rates(s, 2).every((r) => r === 10)), Boolean, 30_000, "for the first apply");
    const before = sandboxes.slice(-4).map((s) => writesTo(s, "k0"));
    expect(before).toEqual([1, 1, 1, 1]);
    await writeFile(path.join(dir, "config/keys.yaml"), keys(2, 10, 55));
    await until(() => sandboxes.slice(-4).every((s) => s.inspect.store.orgKeys.get("k0")?.session.rate === 55), Boolean, 30_000, "for the change");
    await sleep(2_000); // several more loop intervals on both replicas
    expect(sandboxes.slice(-4).map((s) => writesTo(s, "k0"))).toEqual([2, 2, 2, 2]);
    expect(sandboxes.slice(-4).map((s) => writesTo(s, "k1"))).toEqual([1, 1, 1, 1]);
    const st = await status(a);
    expect(st.fleet.leases.map((l) => l.environment).sort()).toEqual(envs);
    expect(new Set(st.fleet.leases.map((l) => l.leader)).size).toBe(2);
    expect(await watch.stop()).toEqual([]);
  }, 150_000);

  it("carries POST /environments/NAME/sync at a replica to that environment's leader, which runs it alone", async () => {
    const target = (await status(b)).fleet.leads[0]!;
    const answer = await call(`${a.url}/environments/${target}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } });
    expect([answer.status, answer.body]).toEqual([202, { status: "accepted", forwardedTo: "leader" }]);
    await until(
      () => ranFor(b, "sync"),
      (e) => e.length > 0,
      10_000,
      "for the leader to run it",
    );
    await sleep(1_000);
    expect([ranFor(a, "sync"), ranFor(b, "sync")]).toEqual([[], [target]]);
  }, 30_000);

  it("moves a killed leader's environments to the survivor, which applies the next change once", async () => {
    const victim = (await status(a)).fleet.leads.length > 0 ? a : b;
    const survivor = victim === a ? b : a;
    const lost = (await status(victim)).fleet.leads;
    const boxes = sandboxes.slice(-4);
    victim.child.kill("SIGKILL");
    await new Promise((resolve) => victim.child.once("close", resolve));
    const killedAt = Date.now();
    await writeFile(path.join(dir, "config/keys.yaml"), keys(2, 10, 77));
    await until(
      async () => (await status(survivor)).fleet.leads.length,
      (n) => n === 4,
      30_000,
      "for the survivor to lead all",
    );
    const ledAt = Date.now();
    await until(() => boxes.every((s) => s.inspect.store.orgKeys.get("k0")?.session.rate === 77), Boolean, 30_000, "for the change after the kill");
    const appliedAt = Date.now();
    console.log(
      `fleet failover after SIGKILL (${lost.join(", ")}): led by the survivor after ${ledAt - killedAt} ms, change applied after ${appliedAt - killedAt} ms`,
    );
    await sleep(1_500);
    expect(boxes.map((s) => writesTo(s, "k0"))).toEqual([3, 3, 3, 3]);
    expect(ledAt - killedAt).toBeLessThan(20_000);
    const exited = new Promise<number | null>((resolve) => survivor.child.once("close", resolve));
    survivor.child.kill("SIGTERM");
    expect(await exited).toBe(0);
  }, 120_000);
});

describe("a fleet of three replicas", () => {
  const envs = ["x1", "x2", "x3"];
  const keyCount = 8;
  let dir: string;
  let fleet: Replica[];
  let boxes: SandboxHandle[];

  it("gives each replica one environment and applies each exactly once per change", async () => {
    // 4 requests per second, one at a time: an apply of 8 keys takes 2 s, long enough to pause it midway
    ({ dir } = await fleetRepo(envs, "{ concurrency: 1, requestsPerSecond: 4 }", keyCount));
    boxes = sandboxes.slice(-3);
    fleet = [startReplica(replicas, "p", dir, replicaEnv()), startReplica(replicas, "q", dir, replicaEnv()), startReplica(replicas, "r", dir, replicaEnv())];
    await until(() => fleet.every((r) => r.url !== undefined), Boolean, 60_000, "for three to listen");
    const watch = watchForTwoLeaders(fleet);
    await until(
      async () => Promise.all(fleet.map(async (r) => (await status(r)).fleet.leads.length)),
      (ns) => ns.every((n) => n === 1),
      30_000,
      "for a 1/1/1 split",
    );
    await until(() => boxes.every((s) => rates(s, keyCount).every((r) => r === 10)), Boolean, 60_000, "for the first apply");
    await writeFile(path.join(dir, "config/keys.yaml"), keys(keyCount, 20));
    await until(() => boxes.every((s) => rates(s, keyCount).every((r) => r === 20)), Boolean, 60_000, "for the change");
    await sleep(2_000);
    for (const s of boxes) for (let i = 0; i < keyCount; i++) expect(writesTo(s, `k${i}`)).toBe(2);
    expect(await watch.stop()).toEqual([]);
  }, 180_000);

  it("moves a paused leader's environment to a live replica; resumed, the paused one sends nothing more for it", async () => {
    const leadsOf = new Map<Replica, string[]>();
    for (const r of fleet) leadsOf.set(r, (await status(r)).fleet.leads);
    const victim = fleet[0]!;
    const env = leadsOf.get(victim)![0]!;
    const box = boxes[envs.indexOf(env)]!;
    const others = fleet.filter((r) => r !== victim);
    const writes = (): number => box.inspect.calls().log.filter((c) => !c.internal && c.method !== "GET").length;
    const start = writes();
    await writeFile(path.join(dir, "config/keys.yaml"), keys(keyCount, 30));
    // freeze the leader once it has sent two of its eight updates
    await until(writes, (n) => n >= start + 2, 30_000, "for the first updates");
    process.kill(victim.child.pid!, "SIGSTOP");
    paused.add(victim);
    const stoppedAt = Date.now();
    const sentBeforePause = writes() - start;
    try {
      await writeFile(path.join(dir, "config/keys.yaml"), keys(keyCount, 40));
      const taker = await until(
        async () => (await Promise.all(others.map(async (r) => ((await status(r)).fleet.leads.includes(env) ? r : undefined)))).find(Boolean),
        (r) => r !== undefined,
        30_000,
        "for another replica to lead the paused one's environment",
      );
      const ledAt = Date.now();
      await until(() => rates(box, keyCount).every((r) => r === 40), Boolean, 60_000, "for the newer change there");
      const appliedAt = Date.now();
      console.log(
        `fleet failover after SIGSTOP (${env}, ${sentBeforePause} of ${keyCount} updates sent before the pause): led by ${taker!.name} after ${ledAt - stoppedAt} ms, newer change applied after ${appliedAt - stoppedAt} ms`,
      );
      expect(ledAt - stoppedAt).toBeLessThan(20_000);
    } finally {
      process.kill(victim.child.pid!, "SIGCONT");
      paused.delete(victim);
    }
    const afterTakeover = writes();
    await sleep(4_000); // the resumed replica's timers, its queued calls and several loop intervals
    expect(writes()).toBe(afterTakeover);
    expect(rates(box, keyCount).every((r) => r === 40)).toBe(true);
    expect(victim.log).toMatch(/lease (lost|lapsed)|no longer leads environment/);
    // the resumed replica rejoins: every environment is still led by exactly one
    const claims = (await Promise.all(fleet.map(async (r) => (await status(r)).fleet.leads))).flat();
    expect(new Set(claims).size).toBe(claims.length);
  }, 180_000);
});
