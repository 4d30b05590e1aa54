/**
 * The guard against mass deactivation, through the daemon on a real git source (issue 36,
 * point 2): a pushed commit that declares no resource at all (`git rm` of every resource file)
 * validates, and with `orphans: deactivate` would switch off every API and org key; the daemon
 * (`gatesync run --once`, a child process) switches off none, says so in its log, and lets it
 * through only for the commit `deactivationGuard.allowCommit` names — or for one run with
 * `--allow-mass-deactivation`.
 */
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { gitRemote } from "../helpers/git-remote.js";
import { spawnCli } from "../helpers/cli.js";
import { git } from "../helpers/git-repo.js";
import { testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { apiDefinition, doc } from "../helpers/resources.js";

let sandbox: SandboxHandle;
let dir: string;
let work: string;

const env = { GW_KEY: testCredentials.gatewayKey, PORTAL_KEY: testCredentials.portalKey, GATESYNC_LOG_FORMAT: "json" };

function push(message: string): string {
  git(work, "add", "-A");
  git(work, "commit", "-q", "--allow-empty", "-m", message);
  git(work, "push", "-q", "origin", "HEAD:main");
  return git(work, "rev-parse", "HEAD");
}

const config = (guard = ""): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source:
  git: { url: ${path.join(dir, "origin.git")}, branch: main, subdirectory: config, cacheDir: ./cache }
targets:
  gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY }
state: { backend: sqlite, path: ./state.db }
orphans: deactivate
${guard}server: { listen: "127.0.0.1:0" }
retries: { max: 1, baseDelayMs: 20, maxDelayMs: 100, timeoutMs: 5000 }
`;

const runOnce = async (...extra: string[]): Promise<Awaited<ReturnType<typeof spawnCli>>> =>
  spawnCli(["run", "--once", "-c", path.join(dir, "gatesync.yaml"), ...extra], { env, cwd: dir });
const active = (): Record<string, unknown> => ({
  petstore: (sandbox.inspect.store.apis.get("petstore-v1")!.extension as { info: { state: { active: boolean } } }).info.state.active,
  orders: (sandbox.inspect.store.apis.get("orders-api")!.extension as { info: { state: { active: boolean } } }).info.state.active,
  key: sandbox.inspect.store.orgKeys.get("org-acme")?.session.is_inactive ?? false,
});

beforeAll(async () => {
  sandbox = await testSandbox();
  dir = await tempRepo();
  work = gitRemote(dir);
  await writeFile(path.join(dir, "gatesync.yaml"), config());
}, 60_000);

afterAll(async () => {
  await sandbox.stop();
  await removeTempRepos();
});

describe("a commit that declares no resource, through the daemon", () => {
  it("switches nothing off, logs why, blocks every deactivation; lifts only for the allowed commit", async () => {
    execFileSync("mkdir", ["-p", path.join(work, "config")]);
    await writeFile(path.join(work, "config/README.md"), "gateway resources\n");
    await writeFile(
      path.join(work, "config/petstore.yaml"),
      apiDefinition({
        name: "petstore",
        apiId: "petstore-v1",
        listenPath: "/petstore/",
        definition: { title: "petstore", server: "http://petstore.internal" },
      }),
    );
    await writeFile(
      path.join(work, "config/orders.yaml"),
      apiDefinition({ name: "orders", apiId: "orders-api", listenPath: "/orders/", definition: { title: "orders", server: "http://orders.internal" } }),
    );
    await writeFile(path.join(work, "config/key.yaml"), doc("OrgKey", "acme", "keyId: org-acme\nrate: 10"));
    push("the gateway's resources");
    const first = await runOnce();
    expect(first.code, first.stderr).toBe(0);
    expect(active()).toEqual({ petstore: true, orders: true, key: false });

    // the mistake: every resource file removed in one commit
    git(work, "rm", "-q", "config/petstore.yaml", "config/orders.yaml", "config/key.yaml");
    const emptied = push("clean up");
    const calls = sandbox.inspect.calls().log.length;
    const guarded = await runOnce();
    expect(guarded.code).toBe(0);
    expect(active()).toEqual({ petstore: true, orders: true, key: false });
    expect(sandbox.inspect.calls().log.length).toBe(calls);
    const log = guarded.stdout + guarded.stderr;
    const warning = log.split("\n").find((l) => l.includes('"msg":"mass deactivation withheld"'));
    expect(warning, log).toBeDefined();
    expect(JSON.parse(warning!)).toMatchObject({ withheld: 3, of: 3, maxShare: 0.5, commit: emptied });
    // the records stay as they were: every later run withholds it again until a person decides
    const state = new SqliteStateBackend(path.join(dir, "state.db"));
    try {
      for (const r of (await state.read()).resources.values()) expect(r.deactivatedAt).toBeUndefined();
    } finally {
      await state.close();
    }
    const again = await runOnce();
    expect(again.stdout + again.stderr).toContain("mass deactivation withheld");
    expect(active()).toEqual({ petstore: true, orders: true, key: false });

    // a person decides: this commit is meant
    await writeFile(path.join(dir, "gatesync.yaml"), config(`deactivationGuard: { allowCommit: ${emptied.slice(0, 12)} }\n`));
    const allowed = await runOnce();
    expect(allowed.code, allowed.stdout + allowed.stderr).toBe(0);
    expect(allowed.stdout + allowed.stderr).not.toContain("mass deactivation withheld");
    expect(active()).toEqual({ petstore: false, orders: false, key: true });
  }, 120_000);

  it("--allow-mass-deactivation is for one run: refused without --once", async () => {
    const refused = await spawnCli(["run", "-c", path.join(dir, "gatesync.yaml"), "--allow-mass-deactivation"], { env, cwd: dir });
    expect(refused.code).toBe(1);
    expect(refused.stderr).toContain("deactivationGuard");
  }, 60_000);
});
