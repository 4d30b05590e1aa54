/**
 * A change to the daemon's state by another writer is reconciled (issue 43, point 4): after a
 * `gatesync apply` from a laptop's working copy with uncommitted edits, against the same SQLite
 * file or PostgreSQL schema, the daemon's next scheduled run — its commit and config unchanged —
 * plans and re-asserts its own values on the servers; /status `synced` and gatesync_synced say
 * so before and after. Real processes: the daemon (`gatesync run`) and the CLI, a real sandbox.
 */
import { cp, mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startSandbox } from "../../src/sandbox/sandbox.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { spawnCli } from "../helpers/cli.js";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { daemonEnv, sandboxTargets, spawnDaemon } from "../helpers/daemon-process.js";
import { eventually } from "../helpers/eventually.js";
import { orgKey } from "../helpers/resources.js";
import { dropTestSchemas, pgUrl, testSchema } from "../helpers/postgres.js";
import { clearedAddresses, exampleFixtures, testCredentials } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

let sandbox: SandboxHandle | undefined;
let daemon: DaemonProcess | undefined;
afterEach(async () => {
  daemon?.child.kill("SIGTERM");
  if (daemon !== undefined && daemon.child.exitCode === null) await new Promise((r) => daemon!.child.once("exit", r));
  daemon = undefined;
  await sandbox?.stop();
  sandbox = undefined;
});
afterAll(async () => {
  await removeTempRepos();
  await dropTestSchemas();
});

const aliasOnServer = (s: SandboxHandle): unknown => (s.inspect.store.orgKeys.get("k")?.session as { alias?: unknown } | undefined)?.alias;

async function json(url: string): Promise<{ synced: boolean }> {
  return (await fetch(url)).json() as Promise<{ synced: boolean }>;
}
async function syncedMetric(url: string): Promise<string | undefined> {
  return /^gatesync_synced(?:\{[^}]*\})? (\d)$/m.exec(await (await fetch(`${url}/metrics`)).text())?.[1];
}

const states = [
  { name: "SQLite", state: (dir: string) => `state: { backend: sqlite, path: ${path.join(dir, "daemon-state.db")} }`, env: {} },
  { name: "PostgreSQL", state: () => `state: { backend: postgres, urlEnv: STATE_PG_URL, schema: ${testSchema()} }`, env: { STATE_PG_URL: pgUrl } },
];

describe.each(states)("the daemon and another writer of its state ($name)", ({ state, env }) => {
  it("re-asserts its commit's values at the next scheduled run after a laptop's apply, and says synced only when they are back", async () => {
    sandbox = await clearedAddresses(await startSandbox({ credentials: testCredentials, fixtures: await exampleFixtures() }));
    const repo = await tempRepo({ "config/k.yaml": orgKey({ name: "k", spec: "alias: daemon" }) });
    const config = (dir: string): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
${sandboxTargets(sandbox!)}${state(repo)}
schedule: { interval: 1s, jitter: 0 }
server: { listen: "127.0.0.1:0" }
retries: { max: 1, baseDelayMs: 20, maxDelayMs: 100, timeoutMs: 5000 }
# ${dir}
`;
    await writeFile(path.join(repo, "gatesync.yaml"), config("daemon"));
    daemon = await spawnDaemon(path.join(repo, "gatesync.yaml"), repo, env);
    const url = daemon.url;
    await eventually(
      () => json(`${url}/status`),
      (s) => s.synced,
      30_000,
      () => daemon!.output().slice(-2000),
    );
    expect(aliasOnServer(sandbox)).toBe("daemon");
    expect(await syncedMetric(url)).toBe("1");

    // a laptop's working copy of the same repository with an uncommitted edit, the same state
    const laptop = await tempRepo();
    await mkdir(path.join(laptop, "config"));
    await cp(path.join(repo, "gatesync.yaml"), path.join(laptop, "gatesync.yaml"));
    await writeFile(path.join(laptop, "config/k.yaml"), orgKey({ name: "k", spec: "alias: laptop" }));
    const applied = await spawnCli(["apply", "--config", path.join(laptop, "gatesync.yaml"), "--auto-approve"], {
      env: { ...daemonEnv, ...env, GATESYNC_LOG_LEVEL: "silent" },
    });
    expect(applied.code, applied.stdout + applied.stderr).toBe(0);
    expect(applied.stdout).toContain("Apply: 1 applied");

    // the daemon's commit and config did not change: its next scheduled run puts its own value back
    // (three writes of the key: the daemon's first run, the laptop's apply, the daemon's re-assert)
    const writes = (): number => sandbox!.inspect.store.orgKeys.get("k")!.writes;
    await eventually(
      writes,
      (n) => n >= 3,
      30_000,
      () => daemon!.output().slice(-2000),
    );
    expect(aliasOnServer(sandbox)).toBe("daemon");
    expect(daemon.output()).toContain("the state was written by another process since the last run: planning again");
    await eventually(
      () => json(`${url}/status`),
      (s) => s.synced,
      30_000,
    );
    expect(await syncedMetric(url)).toBe("1");
    // and it stays put: the runs after it are skipped again, with no call
    const settled = sandbox.inspect.calls().log.length;
    await new Promise((r) => setTimeout(r, 2_500));
    expect(sandbox.inspect.calls().log.length).toBe(settled);
    expect(writes()).toBe(3);
    expect(aliasOnServer(sandbox)).toBe("daemon");
  }, 90_000);
});
