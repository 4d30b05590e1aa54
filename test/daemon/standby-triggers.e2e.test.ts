/**
 * A webhook or `POST /sync` that reaches a standby replica is carried to the leader (LISTEN/NOTIFY
 * on the shared PostgreSQL), or refused with 503 + Retry-After when no leader takes it — never a
 * 202 for work nobody will do. Three real `gatesync run` processes on one PostgreSQL schema and
 * a real git source; the schedule is an hour, so only the triggers make runs. The replicas of
 * this config without `environments:` lead its one environment through the fleet's lease.
 */
import { execFileSync } from "node:child_process";
import { createHmac } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import pg from "pg";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { leaseDefaults } from "../../src/config/lease-section.js";
import { leaseTiming } from "../../src/fleet/lease-session.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { gitRemote } from "../helpers/git-remote.js";
import { git } from "../helpers/git-repo.js";
import { doc } from "../helpers/plan.js";
import { dropTestSchemas, pgUrl, sql, testSchema } from "../helpers/postgres.js";
import { call, testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { listening, startReplica } from "../helpers/replica.js";
import type { Replica } from "../helpers/replica.js";
import { eventually } from "../helpers/eventually.js";

const secret = "standby-hook-secret";
const syncToken = "standby-sync-token";

let sandbox: SandboxHandle;
let dir: string;
let work: string;
let schema: string;
const replicas: Replica[] = [];

const dump = (): string => replicas.map((r) => `--- ${r.name}\n${r.log.slice(-2500)}`).join("\n");

const until = <T>(read: () => Promise<T> | T, ok: (v: T) => boolean, ms = 20_000): Promise<T> => eventually(read, ok, ms, () => `\n${dump()}`, 50);

/** A replica on a config of its own (its own git cache), once it listens. */
async function startListening(name: string): Promise<Replica> {
  const config = path.join(dir, `${name}.yaml`);
  await writeFile(
    config,
    `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source:
  git: { url: ${path.join(dir, "origin.git")}, branch: main, subdirectory: config, cacheDir: ./cache-${name} }
targets:
  gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY }
  portal: { url: ${sandbox.urls.portal}, credentialEnv: PORTAL_KEY }
state: { backend: postgres, urlEnv: DATABASE_URL, schema: ${schema} }
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0", webhookSecretEnv: HOOK_SECRET, syncTokenEnv: SYNC_TOKEN }
retries: { max: 2, baseDelayMs: 20, maxDelayMs: 100, timeoutMs: 5000 }
`,
  );
  const r = startReplica(
    replicas,
    name,
    dir,
    {
      GATESYNC_LOG_LEVEL: "info",
      GW_KEY: testCredentials.gatewayKey,
      PORTAL_KEY: testCredentials.portalKey,
      DATABASE_URL: pgUrl,
      HOOK_SECRET: secret,
      SYNC_TOKEN: syncToken,
    },
    config,
  );
  await until(
    () => r.url,
    (u) => u !== undefined,
  );
  return r;
}

const alive = (): Replica[] => replicas.filter((r) => r.child.exitCode === null && r.child.signalCode === null);
const status = async (r: Replica): Promise<{ role: string; commit: string | null; lastRun: { reason: string; result: string } | null }> =>
  (await call(`${r.url}/status`)).body as never;

/** The one leader among the live replicas, once there is exactly one, and the standbys. */
async function roles(): Promise<{ leader: Replica; standbys: Replica[] }> {
  const seen = await until(
    async () => Promise.all(alive().map(async (r) => ({ r, role: (await status(r)).role }))),
    // a replica serves before its lease connection is up, and refuses (503) what it cannot carry until then
    (xs) => xs.filter((x) => x.role === "leader").length === 1 && xs.every((x) => x.r.log.includes("fleet: connected; listening for triggers")),
  );
  return { leader: seen.find((x) => x.role === "leader")!.r, standbys: seen.filter((x) => x.role === "standby").map((x) => x.r) };
}

function push(rate: number): string {
  execFileSync("sh", ["-c", `sed -i 's/rate: .*/rate: ${rate}/' config/keys.yaml`], { cwd: work });
  git(work, "commit", "-qam", `rate ${rate}`);
  git(work, "push", "-q", "origin", "HEAD:main");
  return git(work, "rev-parse", "HEAD");
}

let deliveries = 0;
function hook(r: Replica, delivery = `d-${++deliveries}`): ReturnType<typeof call> {
  const body = JSON.stringify({ ref: "refs/heads/main" });
  const signature = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
  return call(`${r.url}/hooks/git`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-hub-signature-256": signature, "x-github-delivery": delivery },
    body,
  });
}

const rate = (): number | undefined => (sandbox.inspect.store.orgKeys.get("org-acme")?.session as { rate?: number } | undefined)?.rate;
const keyWrites = (): number => sandbox.inspect.calls().log.filter((c) => c.operation === "upsertOrgKey").length;

beforeAll(async () => {
  sandbox = await testSandbox();
  schema = testSchema();
  dir = await tempRepo();
  work = gitRemote(dir);
  await writeFile(path.join(work, "keys.txt"), "");
  execFileSync("mkdir", ["-p", path.join(work, "config")]);
  await writeFile(path.join(work, "config/keys.yaml"), doc("OrgKey", "acme", "keyId: org-acme\nrate: 10"));
  git(work, "add", "-A");
  git(work, "commit", "-qm", "initial");
  git(work, "push", "-q", "origin", "HEAD:main");
  await Promise.all(["a", "b", "c"].map(startListening));
}, 60_000);

afterAll(async () => {
  for (const r of replicas) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGKILL");
  await sandbox.stop();
  await dropTestSchemas();
  await removeTempRepos();
});

describe("triggers received by a standby replica", () => {
  it("a signed webhook to a standby makes the leader apply the new commit", async () => {
    const { leader, standbys } = await roles();
    expect(standbys).toHaveLength(2);
    await until(rate, (x) => x === 10);
    const writesBefore = keyWrites();
    const commit = push(20);
    const sentAt = Date.now();
    const answer = await hook(standbys[0]!);
    expect(answer.status, dump()).toBe(202);
    expect(answer.body).toEqual({ status: "accepted", forwardedTo: "leader" });
    await until(rate, (x) => x === 20);
    const appliedMs = Date.now() - sentAt;
    console.log(`webhook at a standby → leader applied the commit: ${appliedMs} ms`);
    expect(appliedMs).toBeLessThan(10_000);
    expect(keyWrites() - writesBefore).toBe(1);
    const s = await until(
      () => status(leader),
      (x) => x.commit === commit,
    );
    expect(s.lastRun?.reason).toBe("webhook");
    const forwarded = await until(
      () => /"ms":(\d+)[^\n]*"msg":"trigger forwarded to the leader"/.exec(standbys[0]!.log),
      (m) => m !== null,
    );
    console.log(`the leader acknowledged the forwarded trigger in ${forwarded![1]} ms`);
    await until(
      () => leader.log,
      (l) => l.includes("fleet: trigger received from another replica"),
    );
  }, 30_000);

  it("POST /sync to a standby runs on the leader", async () => {
    const { leader, standbys } = await roles();
    const answer = await call(`${standbys[1]!.url}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } });
    expect(answer.status, dump()).toBe(202);
    expect((answer.body as { forwardedTo?: string }).forwardedTo).toBe("leader");
    await until(
      () => status(leader),
      (x) => x.lastRun?.reason === "sync",
    );
  }, 30_000);

  it("the leader's connection to PostgreSQL drops: it reconnects, says so, and triggers reach the leader again", async () => {
    const { leader } = await roles();
    const connected = (): number => leader.log.split("fleet: connected; listening for triggers").length - 1;
    const before = connected();
    // every session of the leader: its lease connection (which listens for triggers) and its state's
    const killed = await sql<{ n: number }>("SELECT count(pg_terminate_backend(pid))::int AS n FROM pg_stat_activity WHERE application_name LIKE $1", [
      `gatesync % %:${leader.child.pid}`,
    ]);
    expect(killed[0]!.n).toBeGreaterThanOrEqual(1);
    await until(
      () => leader.log,
      (l) => l.includes("fleet: lease connection lost; reconnecting"),
    );
    await until(connected, (n) => n > before);
    const after = await roles();
    const commit = push(30);
    const answer = await hook(after.standbys[0]!);
    expect(answer.status, dump()).toBe(202);
    await until(rate, (x) => x === 30);
    await until(
      () => status(after.leader),
      (x) => x.commit === commit,
    );
  }, 40_000);

  it("the leader is killed: a webhook to a standby is taken by the new leader (refused with 503 + Retry-After while there is none), then applied", async () => {
    const { leader, standbys } = await roles();
    leader.child.kill("SIGKILL");
    await new Promise((resolve) => leader.child.once("close", resolve));
    const commit = push(40);
    const delivery = "d-failover";
    const answers: number[] = [];
    // a sender that honours Retry-After (shortened here), with the same delivery id each time
    const answer = await until(
      async () => {
        const a = await hook(standbys[0]!, delivery);
        answers.push(a.status);
        if (a.status === 503) {
          expect(Number(a.headers["retry-after"])).toBeGreaterThan(0);
          await sleep(300);
        }
        return a;
      },
      (a) => a.status !== 503,
      20_000,
    );
    expect(answer.status, `${answers.join(",")}\n${dump()}`).toBe(202);
    console.log(`answers to the redelivered webhook during the failover: ${answers.join(", ")}`);
    await until(rate, (x) => x === 40);
    const next = await roles();
    expect(next.leader).not.toBe(leader);
    await until(
      () => status(next.leader),
      (x) => x.commit === commit,
    );
  }, 40_000);

  it("a standby with no leader at all refuses (503) and logs it; once a leader is elected the redelivery is applied", async () => {
    for (const r of alive()) {
      const closed = new Promise((resolve) => r.child.once("close", resolve));
      r.child.kill("SIGTERM");
      await closed;
    }
    // the environment's lease, held by someone who is not a gatesync replica: nobody will take a trigger
    const holder = new pg.Client({ connectionString: pgUrl });
    await holder.connect();
    const lease = `${pg.escapeIdentifier(schema)}.fleet_leases`;
    try {
      await holder.query(
        `UPDATE ${lease} SET holder = 'outsider', holder_name = 'outsider', expires_at = now() + interval '1 hour' WHERE environment = 'default'`,
      );
      const lone = await startListening("d");
      await until(
        () => status(lone),
        (s) => s.role === "standby",
      );
      // its lease connection up (a replica that does not lead says standby before): it carries the trigger, and nobody takes it
      await until(() => listening(lone), Boolean);
      const commit = push(50);
      const refused = await hook(lone, "d-lone");
      expect(refused.status).toBe(503);
      expect(refused.headers["retry-after"]).toBe("5");
      // it waited as long as a leader could still lead after the trigger was sent (the default lease's times)
      const waited = leaseTiming(leaseDefaults.durationMs, leaseDefaults.renewMs).ackMs;
      expect((refused.body as { error: string }).error).toMatch(
        new RegExp(`this replica is a standby and no leader acknowledged it within ${waited} ms.*deliver it again`),
      );
      await until(
        () => lone.log,
        (l) => l.includes("trigger refused: this replica is a standby and no leader took it"),
      );
      expect(rate()).toBe(40);
      await holder.query(`UPDATE ${lease} SET holder = NULL, holder_name = NULL, expires_at = '-infinity' WHERE environment = 'default'`);
      await until(
        () => status(lone),
        (s) => s.role === "leader",
      );
      // the same delivery again: not a replay, since it was refused
      expect((await hook(lone, "d-lone")).status).toBe(202);
      await until(rate, (x) => x === 50);
      await until(
        () => status(lone),
        (x) => x.commit === commit,
      );
    } finally {
      await holder.end();
    }
  }, 60_000);
});
