import { spawn } from "node:child_process";
import { readFile, utimes, writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startDaemon } from "../../src/daemon/daemon.js";
import type { Daemon } from "../../src/daemon/daemon.js";
import { silentLogger } from "../../src/logger.js";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { cliArgs } from "../helpers/cli.js";
import { eventually } from "../helpers/eventually.js";
import { doc } from "../helpers/plan.js";
import { call } from "../helpers/sandbox.js";
import { positionOf, projectRoot, removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
let daemon: Daemon | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await h?.stop();
  h = undefined;
});

/** Polls until `check` holds. */
const until = <T>(read: () => Promise<T>, check: (v: T) => boolean, ms = 20_000): Promise<T> => eventually(read, check, ms);

interface ConfigStatus {
  config: { file: string; hash: string; error?: { diagnostics: Array<{ line?: number; column?: number; message: string }> } };
  lastRun: { reason: string } | null;
}

describe("gatesync.yaml reload", () => {
  it("puts a changed config in force, refuses a broken one with its located error and keeps the last good one", async () => {
    h = await harness({ files: { "k.yaml": doc("OrgKey", "k", "keyId: k\nrate: 5") } });
    const file = path.join(h.dir, "gatesync.yaml");
    daemon = await startDaemon({ config: await h.config(), env: h.env, logger: silentLogger(), listen: "127.0.0.1:0", state: h.state });
    const status = async (): Promise<ConfigStatus> => (await call(`${daemon!.url}/status`)).body as ConfigStatus;
    const first = await until(status, (s) => s.lastRun !== null);
    const good = await readFile(file, "utf8");
    await writeFile(file, `${good}orphans: deactivate\n`);
    const reloaded = await until(status, (s) => s.config.hash !== first.config.hash && s.lastRun?.reason === "config change");
    expect(daemon.reconciler.configInForce.config.orphans).toBe("deactivate");
    const broken = `${good}orphans: deactivate\nschedule: { interval: often }\n`;
    await writeFile(file, broken);
    const refused = await until(status, (s) => s.config.error !== undefined);
    expect(refused.config.hash).toBe(reloaded.config.hash);
    expect(refused.config.error!.diagnostics[0]).toMatchObject({ ...positionOf(broken, "often"), message: expect.stringContaining("often") as string });
    expect(daemon.reconciler.configInForce.config.orphans).toBe("deactivate");
    expect((await call(`${daemon.url}/readyz`)).status).toBe(200);
    await writeFile(file, good);
    const fixed = await until(status, (s) => s.config.error === undefined);
    expect(fixed.config.hash).toBe(first.config.hash);
    expect(daemon.reconciler.configInForce.config.orphans).toBe("report");
  }, 60_000);

  it("`gatesync run` reloads on SIGHUP", async () => {
    h = await harness({ files: { "k.yaml": doc("OrgKey", "k", "keyId: k\nrate: 5") } });
    const file = path.join(h.dir, "gatesync.yaml");
    // whole seconds: a modification time that can be put back exactly
    const stamp = 1_700_000_000;
    await utimes(file, stamp, stamp);
    const child = spawn(process.execPath, cliArgs("run", "--config", file, "--listen", "127.0.0.1:0"), {
      cwd: projectRoot,
      env: { ...process.env, ...h.env, GATESYNC_LOG_FORMAT: "json" },
      stdio: ["ignore", "pipe", "pipe"],
    });
    let log = "";
    child.stderr.on("data", (b: Buffer) => (log += b.toString()));
    child.stdout.on("data", (b: Buffer) => (log += b.toString()));
    try {
      const url = (await until(
        () => Promise.resolve(/"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(log)),
        (m) => m !== null,
        60_000,
      ))![1]!;
      await until(
        async () => ((await call(`${url}/status`)).body as ConfigStatus).lastRun,
        (r) => r !== null,
      );
      // same size and modification time: only the signal can tell
      await writeFile(file, (await readFile(file, "utf8")).replace("maxDelayMs: 200", "maxDelayMs: 300"));
      await utimes(file, stamp, stamp);
      await sleep(1_500);
      expect(log.split("\n").filter((l) => l.includes("reloaded"))).toEqual([]);
      child.kill("SIGHUP");
      await until(
        () => Promise.resolve(log),
        (l) => /"reason":"SIGHUP".*"msg":"gatesync.yaml reloaded"/.test(l),
      );
      expect(child.exitCode).toBeNull();
    } finally {
      child.kill("SIGTERM");
      await new Promise((resolve) => child.once("close", resolve));
    }
  }, 90_000);
});
