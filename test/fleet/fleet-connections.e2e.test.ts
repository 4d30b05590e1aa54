/**
 * A fleet's connections do not grow with its environments: 20 environments on two replicas
 * (real processes) through a role whose CONNECTION LIMIT is the documented bound, two replicas ×
 * (state.pool.size 4 + 2: the lease connection and its replacement). Before the shared pool each
 * environment's state opened a pool of its own in every replica, and this fleet ran into "too
 * many connections for role" at once (the 70 environments did at the database's 100).
 * Every environment is applied, no replica's log says the database refused it, and the role's
 * sessions sampled every 50 ms never pass the bound.
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
const role = `gs_fleet_${randomBytes(4).toString("hex")}`;
const poolSize = 4;
const bound = 2 * (poolSize + 2);

afterAll(async () => {
  for (const r of replicas) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGKILL");
  for (const s of sandboxes) await s.stop();
  for (const s of envSchemas.splice(0)) await sql(`DROP SCHEMA IF EXISTS ${s} CASCADE`);
  await dropTestSchemas();
  await dropTestRole(role);
  await removeTempRepos();
});

const until = untilWithLogs(replicas);

const sessions = async (): Promise<number> => Number((await sql<{ n: string }>("SELECT count(*) AS n FROM pg_stat_activity WHERE usename = $1", [role]))[0]!.n);

describe("a fleet of 20 environments on two replicas", () => {
  it(`stays within ${bound} connections (2 × (pool ${poolSize} + 2)) and applies every environment`, async () => {
    await sql(`CREATE ROLE ${role} LOGIN CONNECTION LIMIT ${bound}`);
    await sql(`GRANT CREATE ON DATABASE ${new URL(pgUrl).pathname.slice(1) || "test"} TO ${role}`);
    await grantOwnershipRegistry(role);
    const schema = testSchema();
    const names = Array.from({ length: 20 }, (_, i) => `e${String(i + 1).padStart(2, "0")}`);
    envSchemas.push(...names.map((e) => `${schema}_${e}`));
    const box = await testSandbox();
    sandboxes.push(box);
    const environments = names.map((e) => `  ${e}:\n    values: { p: ${e} }\n`).join("");
    const dir = await tempRepo({
      "config/keys.yaml": ["k0", "k1", "k2"].map((k) => doc("OrgKey", k, `keyId: \${var:p}-${k}\nrate: 10`)).join("---\n"),
      "gatesync.yaml": `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: ${box.urls.gateway}, credentialEnv: GW_KEY, rateLimit: { concurrency: 16, requestsPerSecond: 2000 } }
environments:
${environments}state: { backend: postgres, urlEnv: DATABASE_URL, schema: ${schema}, pool: { size: ${poolSize}, acquireTimeout: 20s } }
schedule: { interval: 1s, jitter: 0 }
server: { listen: "127.0.0.1:0" }
retries: { max: 2, baseDelayMs: 20, maxDelayMs: 100, timeoutMs: 5000 }
`,
    });
    let peak = 0;
    let sampling = true;
    const sampler = (async () => {
      while (sampling) {
        peak = Math.max(peak, await sessions().catch(() => 0));
        await sleep(50);
      }
    })();
    const env = { GATESYNC_LOG_LEVEL: "info", GW_KEY: testCredentials.gatewayKey, DATABASE_URL: urlAs(role) };
    const a = startReplica(replicas, "a", dir, env);
    const b = startReplica(replicas, "b", dir, env);
    const applied = (): string[] => names.filter((e) => ["k0", "k1", "k2"].every((k) => box.inspect.store.orgKeys.has(`${e}-${k}`)));
    await until(applied, (got) => got.length === names.length, 120_000, "for every environment's keys at the gateway");
    // a few more rounds of every environment (runs, history rows, the standbys' views) at the bound
    await sleep(5_000);
    sampling = false;
    await sampler;
    const refused = [a, b].flatMap((r) => r.log.split("\n").filter((l) => /too many (clients|connections)/.test(l)));
    expect(refused.slice(0, 3)).toEqual([]);
    expect(peak).toBeGreaterThan(2);
    expect(peak).toBeLessThanOrEqual(bound);
  }, 180_000);
});
