/**
 * A rollback across a rename (issue 54): a real `gatesync run` process over a real git
 * repository, staging following the branch and production promoted from it, a sandbox each,
 * the state in SQLite or PostgreSQL. v2 renames a portal webhook (declared) and changes it;
 * `gatesync rollback production --to v1` plans it as the same webhook coming back — no create,
 * nothing it "cannot undo" — and leaves one webhook on production's portal with v1's values. A
 * `git revert` of the rename commit, pushed, leaves one webhook in staging, back to v1's values.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/sandbox.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { runCli } from "../helpers/cli.js";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { spawnDaemon, stopDaemon } from "../helpers/daemon-process.js";
import { eventually } from "../helpers/eventually.js";
import { gitRemote, pushFiles } from "../helpers/git-remote.js";
import { git } from "../helpers/git-repo.js";
import { doc } from "../helpers/plan.js";
import { dropTestSchemas, pgUrl, testSchema } from "../helpers/postgres.js";
import { call, clearedAddresses, testCredentials } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const sandboxes: SandboxHandle[] = [];
let daemon: DaemonProcess | undefined;
afterEach(async () => {
  await stopDaemon(daemon);
  daemon = undefined;
  for (const s of sandboxes.splice(0)) await s.stop();
});
afterAll(async () => {
  await removeTempRepos();
  await dropTestSchemas();
});

const hook = (name: string, title: string, url: string, from?: string): string =>
  doc("PortalWebhook", name, `Name: ${title}\nURL: ${url}\nMethod: POST\nEvents: [UserRegistered]`).replace(
    `  name: ${name}\n`,
    `  name: ${name}\n${from === undefined ? "" : `  annotations: { gatesync.dev/moved-from: ${from} }\n`}`,
  );
const v1 = { "config/hook.yaml": hook("orders", "Orders", "https://hooks.example/v1") };
const v2 = { "config/hook.yaml": hook("orders-events", "Order events", "https://hooks.example/v2", "orders") };
const webhooks = (s: SandboxHandle): Array<Record<string, unknown>> => [...s.inspect.store.portalWebhooks.values()] as Array<Record<string, unknown>>;
const tokens = { SYNC_TOKEN: "rename-sync-token", PROMOTE_TOKEN: "rename-promote-token" };

const states = [
  { name: "SQLite", state: (dir: string, env: string) => `state: { backend: sqlite, path: ${JSON.stringify(path.join(dir, `${env}.db`))} }`, env: {} },
  { name: "PostgreSQL", state: () => `state: { backend: postgres, urlEnv: STATE_PG_URL, schema: ${testSchema()} }`, env: { STATE_PG_URL: pgUrl } },
];

describe.each(states)("a rollback across a rename ($name)", ({ state, env }) => {
  it("leaves one webhook on production's portal, updated back to v1; a pushed `git revert` of the rename leaves one in staging", async () => {
    const staging = await clearedAddresses(await startSandbox({ credentials: testCredentials }));
    const production = await clearedAddresses(await startSandbox({ credentials: testCredentials }));
    sandboxes.push(staging, production);
    const dir = await tempRepo();
    const work = gitRemote(dir);
    const first = await pushFiles(work, v1, "orders webhook");
    const operator = path.join(dir, "operator", "gatesync.yaml");
    await mkdir(path.dirname(operator));
    await writeFile(
      operator,
      `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: ${JSON.stringify(path.join(dir, "origin.git"))}, branch: main, subdirectory: config, cacheDir: ./cache } }
environments:
  staging:
    targets: { portal: { url: ${staging.urls.portal}, credentialEnv: PORTAL_KEY } }
    ${state(dir, "staging")}
    soak: 1s
  production:
    targets: { portal: { url: ${production.urls.portal}, credentialEnv: PORTAL_KEY } }
    ${state(dir, "production")}
    track: { promotedFrom: staging }
    promotion: manual
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN, promoteTokenEnv: PROMOTE_TOKEN }
`,
    );
    daemon = await spawnDaemon(operator, path.dirname(operator), { ...tokens, ...env });
    const d = daemon;
    const cli = (...args: string[]): ReturnType<typeof runCli> => runCli([...args, "--daemon", d.url, "-c", operator], tokens);
    const sync = async (): Promise<void> => {
      expect((await call(`${d.url}/sync`, { method: "POST", headers: { authorization: `Bearer ${tokens.SYNC_TOKEN}` } })).status).toBe(202);
    };
    const promoted = (revision: string): Promise<unknown> =>
      eventually(
        () => cli("promote", "production", "--revision", revision),
        (r) => r.code === 0,
        30_000,
        () => d.output().slice(-2000),
      );

    await eventually(
      () => webhooks(staging).length,
      (n) => n === 1,
      30_000,
      () => d.output().slice(-2000),
    );
    await promoted(first);
    await eventually(
      () => webhooks(production),
      (w) => w.length === 1 && w[0]!.Name === "Orders",
      30_000,
    );
    const [created] = webhooks(production);

    const second = await pushFiles(work, v2, "rename orders → orders-events, new URL");
    await sync();
    await eventually(
      () => webhooks(staging),
      (w) => w.length === 1 && w[0]!.Name === "Order events",
      30_000,
    );
    await promoted(second);
    await eventually(
      () => webhooks(production),
      (w) => w.length === 1 && w[0]!.Name === "Order events",
      30_000,
    );

    // the rollback's plan and what it cannot undo, as the operator reads them first
    const dry = await eventually(
      () => cli("rollback", "production", "--to", first, "--dry-run"),
      (r) => r.code === 0,
      30_000,
    );
    expect(dry.stdout).toContain("~ PortalWebhook/orders  update  from PortalWebhook/orders-events (back to an earlier name: same object)");
    expect(dry.stdout).toContain("0 to create");
    expect(dry.stdout).not.toContain("cannot undo");
    expect(dry.stdout).not.toContain("created after");
    const back = await cli("rollback", "production", "--to", first, "--auto-approve");
    expect(back.code, back.stderr).toBe(0);
    await eventually(
      () => webhooks(production),
      (w) => w.length === 1 && w[0]!.Name === "Orders",
      30_000,
      () => d.output().slice(-2000),
    );
    expect(webhooks(production)).toEqual([expect.objectContaining({ ID: created!.ID, Name: "Orders", URL: "https://hooks.example/v1" })]);

    // staging: the rename commit reverted and pushed
    const [stagingHook] = webhooks(staging);
    git(work, "revert", "--no-edit", second);
    git(work, "push", "-q", "origin", "main");
    await sync();
    await eventually(
      () => webhooks(staging),
      (w) => w.length !== 1 || w[0]!.Name === "Orders",
      30_000,
    );
    expect(webhooks(staging)).toEqual([expect.objectContaining({ ID: stagingHook!.ID, Name: "Orders", URL: "https://hooks.example/v1" })]);
    expect(webhooks(production)).toHaveLength(1);
  }, 180_000);
});
