/**
 * One `gatesync run` serving two environments (SQLite states, one sandbox each): both applied
 * with their own values; a value changed in one environment applies there only; /status lists
 * both, /environments/NAME/status has each one's resources, the pages switch between them, and
 * every run metric is labelled with its environment.
 */
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { startDaemon } from "../../src/daemon/daemon.js";
import type { Daemon } from "../../src/daemon/daemon.js";
import { silentLogger } from "../../src/logger.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { launchBrowser, pageProblems } from "../helpers/browser.js";
import { eventually } from "../helpers/eventually.js";
import { doc } from "../helpers/plan.js";
import { call, testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

let staging: SandboxHandle;
let production: SandboxHandle;
let dir: string;
let daemon: Daemon;
const env = { GW_KEY: testCredentials.gatewayKey };

const configText = (stagingRate: number, productionRate: number): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: http://127.0.0.1:9, credentialEnv: GW_KEY }
environments:
  staging:
    targets: { gateway: { url: ${staging.urls.gateway}, credentialEnv: GW_KEY } }
    values: { rate: ${stagingRate} }
  production:
    targets: { gateway: { url: ${production.urls.gateway}, credentialEnv: GW_KEY } }
    values: { rate: ${productionRate} }
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0" }
`;

const writes = (s: SandboxHandle): number => s.inspect.calls().log.filter((c) => !c.internal && c.method !== "GET").length;

beforeAll(async () => {
  staging = await testSandbox();
  production = await testSandbox();
  dir = await tempRepo({
    "config/keys.yaml": `${doc("OrgKey", "acme", "keyId: org-acme\nrate: ${var:rate}")}---\n${doc("OrgKey", "globex", "keyId: org-globex\nrate: 5")}`,
  });
  await writeFile(path.join(dir, "gatesync.yaml"), configText(10, 20));
  daemon = await startDaemon({
    config: await loadConfig(path.join(dir, "gatesync.yaml")),
    env,
    logger: silentLogger(),
    listen: "127.0.0.1:0",
    watchConfig: false,
  });
}, 30_000);

afterAll(async () => {
  await daemon?.stop();
  await staging.stop();
  await production.stop();
  await removeTempRepos();
});

describe("a daemon of two environments", () => {
  it("applies each environment with its values, and a value changed in one applies there only", async () => {
    const report = await daemon.firstRun;
    expect(report.result).toBe("applied");
    await eventually(
      () => [staging.inspect.store.orgKeys.get("org-acme")?.session.rate, production.inspect.store.orgKeys.get("org-acme")?.session.rate],
      ([s, p]) => s === 10 && p === 20,
    );
    const before = [writes(staging), writes(production)];
    await writeFile(path.join(dir, "gatesync.yaml"), configText(10, 30));
    expect(await daemon.reload("test")).toBe("reloaded");
    await eventually(
      () => production.inspect.store.orgKeys.get("org-acme")?.session.rate,
      (r) => r === 30,
    );
    await eventually(
      () => daemon.environments.get("staging")?.lastRun?.reason,
      (r) => r === "config change",
    );
    expect([writes(staging) - before[0]!, writes(production) - before[1]!]).toEqual([0, 1]);
    expect(staging.inspect.store.orgKeys.get("org-acme")?.session.rate).toBe(10);
  });

  it("answers /status for every environment and each one's own below /environments/NAME/", async () => {
    type Version = { lineage: string; serial: number };
    const all = (await call(`${daemon.url}/status`)).body as {
      role: string;
      environments: Array<{ environment: string; leader: string; synced: boolean; state: Version; resources?: unknown }>;
    };
    expect(all.role).toBe("single");
    expect(all.environments.map((e) => e.environment)).toEqual(["staging", "production"]);
    expect(all.environments.every((e) => e.synced && e.leader === "this daemon" && e.resources === undefined)).toBe(true);
    const one = (await call(`${daemon.url}/environments/production/status`)).body as { environment: string; state: Version; resources: Array<{ id: string }> };
    expect(one.environment).toBe("production");
    // the list reads each state's version alone: the same one the environment's own status reads with its records
    expect(all.environments[1]!.state).toEqual(one.state);
    expect(one.state.serial).toBeGreaterThan(0);
    expect(one.resources.map((r) => r.id)).toEqual(["OrgKey/acme", "OrgKey/globex"]);
    expect((await call(`${daemon.url}/environments/nowhere/status`)).status).toBe(404);
  });

  it("serves each environment's pages with a switcher to the other, and labels the metrics", async () => {
    const root = await call(`${daemon.url}/`);
    expect(root.status).toBe(302);
    const page = await call(`${daemon.url}/environments/staging/`);
    expect(page.status).toBe(200);
    expect(page.text).toContain('<nav class="environments"');
    expect(page.text).toMatch(/href="\.\/\.\.\/production\/"/);
    expect(page.text).toMatch(/href="\.\/\.\.\/staging\/"\s+aria-current="page"/);
    const resources = await call(`${daemon.url}/environments/production/resources`);
    expect(resources.text).toContain("OrgKey/acme");
    expect((await call(`${daemon.url}/environments/production/ui/app.css`)).status).toBe(200);
    const metrics = (await call(`${daemon.url}/metrics`)).text;
    expect(metrics).toMatch(/gatesync_runs_total\{result="\w+",environment="staging"\}/);
    expect(metrics).toMatch(/gatesync_synced\{environment="production"\} 1/);
  });

  it("switches environments in a real browser: each page shows its own environment's resources", async () => {
    const browser = await launchBrowser();
    try {
      const page = await browser.newPage();
      const problems = pageProblems(page);
      await page.goto(`${daemon.url}/`);
      expect(new URL(page.url()).pathname).toBe("/environments/staging/");
      expect(await page.title()).toContain("staging");
      await page.locator("nav.environments").getByRole("link", { name: "production" }).click();
      await page.waitForURL(/\/environments\/production\/$/);
      expect(await page.title()).toContain("production");
      expect(await page.locator('nav.environments a[aria-current="page"]').textContent()).toBe("production");
      // the same kind of page, of the other environment: production's org key has its own rate
      await page.goto(`${daemon.url}/environments/production/resources/OrgKey/acme`);
      const applied = JSON.parse((await page.locator("section", { hasText: "Last applied request" }).locator("pre.json").textContent()) ?? "{}") as {
        rate?: unknown;
      };
      expect(applied.rate).toBe(30);
      await page.locator("nav.environments").getByRole("link", { name: "staging" }).click();
      await page.waitForURL(/\/environments\/staging\//);
      expect(await page.title()).toContain("staging");
      expect(problems).toEqual([]);
      await page.close();
    } finally {
      await browser.close();
    }
  }, 60_000);
});

describe("the sync trigger of one environment", () => {
  const syncToken = "one-environment-sync-token";
  const pagesToken = "one-environment-pages-token";
  let one: Daemon;

  afterAll(async () => {
    await one?.stop();
  });

  it("runs that environment alone on POST /environments/NAME/sync, with the sync token and without the pages' token", async () => {
    const repo = await tempRepo({ "config/keys.yaml": doc("OrgKey", "solo", "keyId: org-solo\nrate: ${var:rate}") });
    await writeFile(
      path.join(repo, "gatesync.yaml"),
      configText(1, 2).replace('server: { listen: "127.0.0.1:0" }', 'server: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN, pagesTokenEnv: PAGES_TOKEN }'),
    );
    one = await startDaemon({
      config: await loadConfig(path.join(repo, "gatesync.yaml")),
      env: { ...env, SYNC_TOKEN: syncToken, PAGES_TOKEN: pagesToken },
      logger: silentLogger(),
      listen: "127.0.0.1:0",
      watchConfig: false,
    });
    await one.firstRun;
    const last = (name: string) => one.environments.get(name)?.lastRun;
    const stagingRun = last("staging");
    const url = `${one.url}/environments/production/sync`;
    const bearer = (token: string) => ({ authorization: `Bearer ${token}` });
    // its own secret: the pages' token does not open it, and it does not ask for that one
    expect((await call(url, { method: "POST" })).status).toBe(401);
    expect((await call(url, { method: "POST", headers: bearer(pagesToken) })).status).toBe(401);
    expect((await call(url, { headers: bearer(syncToken) })).status).toBe(405);
    // the names are told only to a client holding the token: past the pages' token, the sync path
    // must not list them to anyone
    for (const name of ["nowhere", "%E0%A4%A"]) {
      const anonymous = await call(`${one.url}/environments/${name}/sync`, { method: "POST" });
      expect([anonymous.status, anonymous.text.includes("staging")]).toEqual([401, false]);
    }
    // a body is never read: refused, the connection is closed rather than drained
    const heavy = await call(url, { method: "POST", body: "x".repeat(1024 * 1024) });
    expect([heavy.status, heavy.headers.connection]).toEqual([401, "close"]);
    const unknown = await call(`${one.url}/environments/nowhere/sync`, { method: "POST", headers: bearer(syncToken) });
    expect([unknown.status, unknown.body]).toEqual([404, { error: "no such environment", environments: ["staging", "production"] }]);
    expect((await call(`${one.url}/environments/production/status`)).status).toBe(401);

    const accepted = await call(url, { method: "POST", headers: bearer(syncToken) });
    expect([accepted.status, accepted.body]).toEqual([202, { status: "accepted" }]);
    await eventually(
      () => last("production")?.reason,
      (r) => r === "sync",
    );
    // runs take turns: a staging run asked for too would have followed within this wait
    await sleep(1_000);
    expect(last("staging")).toBe(stagingRun);

    // /sync still runs every environment
    expect((await call(`${one.url}/sync`, { method: "POST", headers: bearer(syncToken) })).status).toBe(202);
    await eventually(
      () => last("staging")?.reason,
      (r) => r === "sync",
    );
  }, 30_000);
});
