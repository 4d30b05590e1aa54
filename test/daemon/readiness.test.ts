import { Writable } from "node:stream";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { startDaemon } from "../../src/daemon/daemon.js";
import type { Daemon } from "../../src/daemon/daemon.js";
import type { RunReport } from "../../src/run/run-report.js";
import { createLogger, silentLogger } from "../../src/logger.js";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { committedRepo, gitSourceConfig } from "../helpers/git-repo.js";
import { doc } from "../helpers/plan.js";
import { call } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
let daemon: Daemon | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await h?.stop();
  h = undefined;
});

const files = { "p.yaml": doc("ApiProduct", "shop", "Name: Shop\nProviderID: 1"), "k.yaml": doc("OrgKey", "k", "keyId: k\nrate: 5") };

/** Starts the daemon and resolves with it and a waiter for the next run's report. */
async function start(h: Harness, extra: Partial<Parameters<typeof startDaemon>[0]> = {}): Promise<{ daemon: Daemon; nextRun: () => Promise<RunReport> }> {
  let waiting: ((r: RunReport) => void) | undefined;
  const runs: RunReport[] = [];
  const d = await startDaemon({
    config: await h.config(),
    env: h.env,
    logger: silentLogger(),
    listen: "127.0.0.1:0",
    state: h.state,
    onRun: (r) => (waiting === undefined ? runs.push(r) : (waiting(r), (waiting = undefined))),
    ...extra,
  });
  const nextRun = (): Promise<RunReport> => (runs.length > 0 ? Promise.resolve(runs.shift()!) : new Promise((resolve) => (waiting = resolve)));
  return { daemon: d, nextRun };
}

describe("readiness means serving; synced is separate", () => {
  it("a standby replica is ready at once, and says it is not synced", async () => {
    h = await harness({ files });
    const s = await start(h, { canApply: () => false, role: () => "standby" });
    daemon = s.daemon;
    expect((await s.nextRun()).result).toBe("standby");
    const ready = await call(`${daemon.url}/readyz`);
    expect(ready.status).toBe(200);
    expect(ready.body).toEqual({ status: "ready", role: "standby", synced: false });
    expect((await call(`${daemon.url}/status`)).body).toMatchObject({ role: "standby", ready: true, synced: false });
    expect((await call(`${daemon.url}/metrics`)).text).toMatch(/^gatesync_synced 0$/m);
  });

  it('synced and gatesync_synced follow the runs; blocked changes count in gatesync_resources{status="blocked"} and unsync', async () => {
    h = await harness({ files });
    const s = await start(h);
    daemon = s.daemon;
    expect((await s.nextRun()).result).toBe("applied");
    expect((await call(`${daemon.url}/status`)).body).toMatchObject({ ready: true, synced: true });
    const metrics = (await call(`${daemon.url}/metrics`)).text;
    expect(metrics).toMatch(/^gatesync_synced 1$/m);
    // process metrics carry one prefix
    expect(metrics).toMatch(/^gatesync_process_cpu_user_seconds_total /m);
    expect(metrics).not.toContain("gatesync_process_process_");
    await writeFile(path.join(h.dir, "config/p.yaml"), doc("ApiProduct", "shop", "Name: Renamed\nProviderID: 1"));
    daemon.reconciler.trigger("test");
    const run = await s.nextRun();
    expect(run.summary?.blocked).toEqual(["ApiProduct/shop"]);
    const after = (await call(`${daemon.url}/metrics`)).text;
    expect(after).toMatch(/^gatesync_resources\{status="blocked"\} 1$/m);
    expect(after).toMatch(/^gatesync_synced 0$/m);
    expect((await call(`${daemon.url}/readyz`)).status).toBe(200);
  });
});

describe("per-resource log lines", () => {
  it("carry the commit once", async () => {
    h = await harness({ files });
    const origin = await committedRepo(Object.fromEntries(Object.entries(files).map(([k, v]) => [`config/${k}`, v])));
    const cfgFile = path.join(h.dir, "git.yaml");
    const base = await h.config();
    await writeFile(cfgFile, gitSourceConfig(origin.dir, path.join(h.dir, "cache")));
    const lines: string[] = [];
    const sink = new Writable({ write: (chunk: Buffer, _e, done) => (lines.push(...chunk.toString().split("\n").filter(Boolean)), done()) });
    const logger = createLogger({ level: "debug", destination: sink });
    const gitConfig = { ...(await loadConfig(cfgFile)), targets: base.targets, state: base.state, secrets: base.secrets };
    const s = await start(h, { config: gitConfig, logger });
    daemon = s.daemon;
    expect((await s.nextRun()).result).toBe("applied");
    const perResource = lines.filter((l) => l.includes('"resource":"OrgKey/k"'));
    expect(perResource.length).toBeGreaterThan(0);
    for (const l of lines) expect(l.split('"commit":').length - 1, l).toBeLessThanOrEqual(1);
    for (const l of perResource) expect(l).toContain(`"commit":"${origin.commit}"`);
  });
});
