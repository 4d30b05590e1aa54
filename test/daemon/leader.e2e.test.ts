/**
 * Two replicas of `gatesync run` on one repository and one PostgreSQL state: exactly one
 * applies; when it is killed (SIGKILL), the other takes over and applies the next change.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { doc } from "../helpers/plan.js";
import { dropTestSchemas, pgUrl, testSchema } from "../helpers/postgres.js";
import { call, testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { startReplica } from "../helpers/replica.js";
import type { Replica } from "../helpers/replica.js";
import { eventually } from "../helpers/eventually.js";

let sandbox: SandboxHandle;
let dir: string;
const replicas: Replica[] = [];

const until = <T>(read: () => Promise<T> | T, ok: (v: T) => boolean, ms = 15_000): Promise<T> =>
  eventually(read, ok, ms, () => `\n${replicas.map((r) => `--- ${r.name}\n${r.log.slice(-3000)}`).join("\n")}`);

const replicaEnv = (): Record<string, string> => ({
  GW_KEY: testCredentials.gatewayKey,
  PORTAL_KEY: testCredentials.portalKey,
  DASH_TOKEN: testCredentials.dashboardToken,
  LLM_KEY: testCredentials.llmKey,
  DATABASE_URL: pgUrl,
});

const role = async (r: Replica): Promise<string> => ((await call(`${r.url}/status`)).body as { role: string }).role;

beforeAll(async () => {
  sandbox = await testSandbox();
  const schema = testSchema();
  dir = await tempRepo({
    "config/keys.yaml": `${doc("OrgKey", "acme", "keyId: org-acme\nrate: 10")}---\n${doc("OrgKey", "globex", "keyId: org-globex\nrate: 20")}`,
    "config/product.yaml": doc("ApiProduct", "shop", "Name: Shop\nProviderID: 1"),
    "gatesync.yaml": `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY }
  portal: { url: ${sandbox.urls.portal}, credentialEnv: PORTAL_KEY }
state: { backend: postgres, urlEnv: DATABASE_URL, schema: ${schema} }
schedule: { interval: 500ms, jitter: 0 }
server: { listen: "127.0.0.1:0" }
retries: { max: 2, baseDelayMs: 20, maxDelayMs: 100, timeoutMs: 5000 }
`,
  });
}, 30_000);

afterAll(async () => {
  for (const r of replicas) if (r.child.exitCode === null && r.child.signalCode === null) r.child.kill("SIGKILL");
  await sandbox.stop();
  await dropTestSchemas();
  await removeTempRepos();
});

describe("replicas on a shared PostgreSQL state", () => {
  it("elect one leader; only it applies; the standby serves status from the shared state", async () => {
    const a = startReplica(replicas, "a", dir, replicaEnv());
    const b = startReplica(replicas, "b", dir, replicaEnv());
    await until(
      () => a.url !== undefined && b.url !== undefined,
      (ok) => ok,
    );
    const roles = await until(
      async () => [await role(a), await role(b)].sort(),
      (x) => x.join() === "leader,standby",
    );
    expect(roles).toEqual(["leader", "standby"]);
    await until(
      () => sandbox.inspect.store.orgKeys.size === 2 && sandbox.inspect.store.products.size === 1,
      (ok) => ok,
    );
    await sleep(2_000); // several more loop intervals on both replicas
    expect(sandbox.inspect.calls().counts.createProduct?.total).toBe(1);
    expect(sandbox.inspect.store.products.size).toBe(1);
    const standby = (await role(a)) === "standby" ? a : b;
    const leader = standby === a ? b : a;
    const status = (await call(`${standby.url}/status`)).body as {
      role: string;
      synced: boolean;
      lastRun: { result: string; replica: string };
      resources: Array<{ id: string; status: string }>;
    };
    expect(status.role).toBe("standby");
    // the standby describes the environment: the leader's last run, read from the shared state
    expect(["applied", "noop"]).toContain(status.lastRun.result);
    expect(status.lastRun.replica).toContain(`:${leader.child.pid}`);
    expect(status.synced).toBe(true);
    expect(status.resources.map((x) => x.id).sort()).toEqual(["ApiProduct/shop", "OrgKey/acme", "OrgKey/globex"]);
    const metrics = (await call(`${standby.url}/metrics`)).text;
    expect(metrics).toMatch(/^gatesync_leader 0$/m);
  });

  it("fails over within seconds when the leader is killed, and the new leader applies the next change", async () => {
    const [a, b] = replicas as [Replica, Replica];
    const leader = (await role(a)) === "leader" ? a : b;
    const standby = leader === a ? b : a;
    leader.child.kill("SIGKILL");
    await new Promise((resolve) => leader.child.once("close", resolve));
    const killedAt = Date.now();
    const file = path.join(dir, "config/keys.yaml");
    await writeFile(file, (await readFile(file, "utf8")).replace("rate: 20", "rate: 99"));
    await until(
      () => sandbox.inspect.store.orgKeys.get("org-globex")?.session.rate,
      (rate) => rate === 99,
      15_000,
    );
    expect(Date.now() - killedAt).toBeLessThan(15_000);
    expect(await role(standby)).toBe("leader");
    expect((await call(`${standby.url}/metrics`)).text).toMatch(/^gatesync_leader 1$/m);
    expect(sandbox.inspect.store.products.size).toBe(1);
    const exited = new Promise<number | null>((resolve) => standby.child.once("close", resolve));
    standby.child.kill("SIGTERM");
    expect(await exited).toBe(0);
  });
});
