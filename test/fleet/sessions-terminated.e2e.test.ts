/**
 * A replica outlives its database sessions: while a replica of 20 environments syncs, every
 * backend of its sessions (its role's, named `gatesync <id> …` as a takeover's fenceOff finds them)
 * is terminated every 100–300 ms for a few seconds (57P01, "terminating connection due to
 * administrator command"). The statement in flight fails and the run with it; the process stays
 * up, its lease connection reconnects, every environment is applied afterwards, and its log
 * shows no uncaught error. At 500 environments (bench/fleet-scale.ts) replicas exited of an
 * unheard 'error' event on a pg client instead.
 */
import { randomBytes } from "node:crypto";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { dropTestRole, dropTestSchemas, grantOwnershipRegistry, pgUrl, sql, testSchema, urlAs } from "../helpers/postgres.js";
import { doc } from "../helpers/resources.js";
import { testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { startReplica, untilWithLogs } from "../helpers/replica.js";
import type { Replica } from "../helpers/replica.js";

const replicas: Replica[] = [];
const sandboxes: SandboxHandle[] = [];
const envSchemas: string[] = [];
// a role of its own: only this test's replica's sessions are terminated, never another test's
const role = `gs_term_${randomBytes(4).toString("hex")}`;

afterAll(async () => {
  for (const r of replicas) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGKILL");
  for (const s of sandboxes) await s.stop();
  for (const s of envSchemas.splice(0)) await sql(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  await dropTestSchemas();
  await dropTestRole(role);
  await removeTempRepos();
});

const until = untilWithLogs(replicas);

/** What a takeover's fenceOff does to a replica: every session named for it ended (57P01). */
const terminateAll = async (): Promise<number> =>
  Number(
    (
      await sql<{ n: string }>("SELECT count(pg_terminate_backend(pid)) AS n FROM pg_stat_activity WHERE usename = $1 AND application_name LIKE 'gatesync %'", [
        role,
      ])
    )[0]!.n,
  );

const alive = (r: Replica): boolean => r.child.exitCode === null && r.child.signalCode === null;

describe("a replica whose sessions are terminated while it syncs", () => {
  it("stays up, reconnects and applies every environment", async () => {
    await sql(`CREATE ROLE ${role} LOGIN`);
    await sql(`GRANT CREATE ON DATABASE ${new URL(pgUrl).pathname.slice(1) || "test"} TO ${role}`);
    await grantOwnershipRegistry(role);
    const schema = testSchema();
    const names = Array.from({ length: 20 }, (_, i) => `e${String(i + 1).padStart(2, "0")}`);
    envSchemas.push(...names.map((e) => `${schema}_${e}`));
    const box = await testSandbox();
    sandboxes.push(box);
    const dir = await tempRepo({
      "config/keys.yaml": ["k0", "k1", "k2"].map((k) => doc("OrgKey", k, `keyId: \${var:p}-${k}\nrate: 10`)).join("---\n"),
      "gatesync.yaml": `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: ${box.urls.gateway}, credentialEnv: GW_KEY, rateLimit: { concurrency: 16, requestsPerSecond: 2000 } }
environments:
${names.map((e) => `  ${e}:\n    values: { p: ${e} }\n`).join("")}state: { backend: postgres, urlEnv: DATABASE_URL, schema: ${schema}, pool: { size: 4, acquireTimeout: 20s } }
schedule: { interval: 1s, jitter: 0 }
server: { listen: "127.0.0.1:0" }
retries: { max: 2, baseDelayMs: 20, maxDelayMs: 100, timeoutMs: 5000 }
`,
    });
    const a = startReplica(replicas, "a", dir, {
      GATESYNC_LOG_LEVEL: "info",
      GW_KEY: testCredentials.gatewayKey,
      DATABASE_URL: urlAs(role),
    });
    // from its first session on: during the migrations, the lease takes and the first runs
    await until(
      () => terminateAll().catch(() => 0),
      (n) => n > 0 || !alive(a),
      60_000,
      "for the replica's first session",
    );
    let ended = 0;
    const stop = performance.now() + 6_000;
    while (performance.now() < stop && alive(a)) {
      ended += await terminateAll();
      await sleep(100 + Math.random() * 200);
    }
    const uncaught = (): string[] => a.log.split("\n").filter((l) => /uncaught|unhandled|"level":60|^\s+at /i.test(l));
    expect({ alive: alive(a), uncaught: uncaught().slice(0, 5), tail: alive(a) ? "" : a.log.slice(-3000) }).toEqual({ alive: true, uncaught: [], tail: "" });
    expect(ended).toBeGreaterThan(10);
    const applied = (): string[] => names.filter((e) => ["k0", "k1", "k2"].every((k) => box.inspect.store.orgKeys.has(`${e}-${k}`)));
    await until(applied, (got) => got.length === names.length || !alive(a), 120_000, "for every environment's keys at the gateway");
    expect({ alive: alive(a), applied: applied().length, uncaught: uncaught().slice(0, 5) }).toEqual({ alive: true, applied: names.length, uncaught: [] });
  }, 200_000);
});
