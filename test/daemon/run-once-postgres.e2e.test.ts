/**
 * `gatesync run --once` on a PostgreSQL state: its one run starts once the replica took the
 * lease (the leases' first round), so a lone replica applies and exits 0 — not "standby" (exit
 * 1) because the run came before the lease was asked for. A second `--once` while a daemon leads
 * the environment is a standby's run: it sends nothing and says so with its exit code.
 */
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { runCli } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";
import { doc } from "../helpers/plan.js";
import { dropTestSchemas, pgUrl, testSchema } from "../helpers/postgres.js";
import { spawnReplica } from "../helpers/replica.js";
import type { Replica } from "../helpers/replica.js";
import { call, testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

let sandbox: SandboxHandle;
let dir: string;
let daemon: Replica | undefined;
const env = (): Record<string, string> => ({ GW_KEY: testCredentials.gatewayKey, DATABASE_URL: pgUrl });

beforeAll(async () => {
  sandbox = await testSandbox();
  dir = await tempRepo({
    "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: 10"),
    "gatesync.yaml": `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY }
state: { backend: postgres, urlEnv: DATABASE_URL, schema: ${testSchema()} }
schedule: { interval: 1h, jitter: 0 }
server: { listen: "127.0.0.1:0" }
`,
  });
}, 30_000);

afterAll(async () => {
  if (daemon !== undefined && daemon.child.exitCode === null) daemon.child.kill("SIGKILL");
  await sandbox.stop();
  await dropTestSchemas();
  await removeTempRepos();
});

const writes = (): number => sandbox.inspect.calls().log.filter((c) => !c.internal && c.interface === "gateway").length;

describe("run --once on a PostgreSQL state", () => {
  it("a lone replica takes the lease before its run: it applies and exits 0", async () => {
    const r = await runCli(["run", "--config", path.join(dir, "gatesync.yaml"), "--once"], env());
    expect(r.code, r.stderr + r.stdout).toBe(0);
    expect(writes()).toBeGreaterThan(0);
  }, 60_000);

  it("while a daemon leads the environment, --once is a standby's run: nothing sent, exit 1", async () => {
    daemon = spawnReplica("leader", path.join(dir, "gatesync.yaml"), dir, env());
    await eventually(
      async () => (daemon!.url === undefined ? "" : ((await call(`${daemon!.url}/status`)).body as { role?: string }).role),
      (role) => role === "leader",
      30_000,
    );
    const before = writes();
    const r = await runCli(["run", "--config", path.join(dir, "gatesync.yaml"), "--once"], env());
    expect(r.code).toBe(1);
    expect(writes()).toBe(before);
  }, 60_000);
});
