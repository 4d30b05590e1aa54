/**
 * What an operator learns from the daemon's JSON log alone (kubectl logs, a log search): why a
 * commit was refused (each error located), which changes are blocked, how a run ended, and at
 * start which trigger will answer 404. A real daemon process on a real git source.
 */
import { execFileSync } from "node:child_process";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { gitRemote } from "../helpers/git-remote.js";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { sandboxTargets, spawnDaemon } from "../helpers/daemon-process.js";
import { eventually } from "../helpers/eventually.js";
import { git } from "../helpers/git-repo.js";
import { call, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { orgKey, product } from "../helpers/resources.js";

const syncToken = "sync-token-for-log-tests";
let sandbox: SandboxHandle;
let dir: string;
let work: string;
let daemon: DaemonProcess;

interface LogLine {
  readonly level: number;
  readonly msg: string;
  readonly [field: string]: unknown;
}

/** The daemon's log lines so far, parsed. */
function logLines(): LogLine[] {
  return daemon
    .output()
    .split("\n")
    .filter((l) => l.startsWith("{"))
    .map((l) => JSON.parse(l) as LogLine);
}

/** Waits for the first line with `msg` after the first `skip` lines. */
async function lineAfter(skip: number, msg: string): Promise<LogLine> {
  const found = await eventually(
    () =>
      logLines()
        .slice(skip)
        .find((l) => l.msg === msg),
    (l) => l !== undefined,
    30_000,
    () => `\n${daemon.output().slice(-3000)}`,
  );
  return found!;
}

async function pushAndSync(files: Record<string, string>, message: string): Promise<number> {
  for (const [file, text] of Object.entries(files)) await writeFile(path.join(work, "config", file), text);
  git(work, "add", "-A");
  git(work, "commit", "-q", "-m", message);
  git(work, "push", "-q", "origin", "HEAD:main");
  const seen = logLines().length;
  expect((await call(`${daemon.url}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } })).status).toBe(202);
  return seen;
}

beforeAll(async () => {
  sandbox = await testSandbox();
  dir = await tempRepo();
  work = gitRemote(dir);
  execFileSync("mkdir", ["-p", path.join(work, "config")]);
  await writeFile(path.join(work, "config/p.yaml"), product({ name: "shop", title: "Shop" }));
  await writeFile(path.join(work, "config/k.yaml"), orgKey({ name: "k", rate: "5" }));
  git(work, "add", "-A");
  git(work, "commit", "-q", "-m", "initial");
  git(work, "push", "-q", "origin", "HEAD:main");
  await writeFile(
    path.join(dir, "gatesync.yaml"),
    `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: ${path.join(dir, "origin.git")}, branch: main, subdirectory: config, cacheDir: ./cache } }
${sandboxTargets(sandbox)}state: { backend: sqlite, path: ./state.db }
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0", webhookSecretEnv: HOOK_SECRET, syncTokenEnv: SYNC_TOKEN }
retries: { max: 1, baseDelayMs: 20, maxDelayMs: 100, timeoutMs: 5000 }
`,
  );
  // HOOK_SECRET is named but left unset, as a new user forgets it
  daemon = await spawnDaemon(path.join(dir, "gatesync.yaml"), dir, { SYNC_TOKEN: syncToken });
  await lineAfter(0, "run finished");
}, 90_000);

afterAll(async () => {
  if (daemon.child.exitCode === null) daemon.child.kill("SIGKILL");
  await sandbox.stop();
  await removeTempRepos();
});

describe("the daemon's log", () => {
  it("warns at start that the webhook's variable is unset, and the webhook's 404 says what to set", async () => {
    const warning = logLines().find((l) => l.msg.startsWith("trigger variable not set"));
    expect(warning).toMatchObject({ level: 40, route: "POST /hooks/git", setting: "server.webhookSecretEnv", variable: "HOOK_SECRET" });
    // the sync token is set: no warning about it
    expect(logLines().filter((l) => l.msg.startsWith("trigger"))).toHaveLength(1);
    const hook = await call(`${daemon.url}/hooks/git`, { method: "POST", headers: { "content-type": "application/json" }, body: "{}" });
    expect(hook.status).toBe(404);
    expect((hook.body as { error: string }).error).toBe(
      "the push webhook is not configured: HOOK_SECRET (named by server.webhookSecretEnv) is not set in the daemon's environment",
    );
  });

  it("status page: never 'synced: yes' while the branch head is being applied, and '1 call', not '1 calls'", async () => {
    expect((await call(`${daemon.url}/`)).text).toContain("<dt>synced</dt><dd>yes: the newest commit is applied in full</dd>");
    // the gateway answers slowly: the run that applies the new head takes seconds
    sandbox.inspect.setFaults({ latencyMs: 3000, interfaces: ["gateway"] });
    try {
      const seen = await pushAndSync({ "k.yaml": orgKey({ name: "k", rate: "6" }) }, "raise the rate");
      await lineAfter(seen, "run started");
      const during = (await call(`${daemon.url}/`)).text;
      expect(during).toContain("not applied yet");
      expect(during).toContain("<dt>synced</dt><dd>no: the branch head is being applied</dd>");
      expect((await call(`${daemon.url}/status`)).body).toMatchObject({ synced: false });
      expect(await lineAfter(seen, "run finished")).toMatchObject({ applied: 1 });
    } finally {
      sandbox.inspect.setFaults({ latencyMs: 0 });
    }
    const after = (await call(`${daemon.url}/`)).text;
    expect(after).toContain("<dt>synced</dt><dd>yes: the newest commit is applied in full</dd>");
    // one batch call carried the change
    expect(after).toMatch(/, 1 call<\/title>/);
    expect(after).not.toMatch(/\b1 calls\b/);
  });

  it("names the blocked changes, where they are and what to do, and counts them in `run finished`", async () => {
    const seen = await pushAndSync({ "p.yaml": product({ name: "shop", title: "Shop renamed" }) }, "rename the product");
    const blocked = await lineAfter(seen, "changes blocked: not applied until a person acts");
    expect(blocked.level).toBe(40);
    expect(blocked.blocked).toEqual([
      expect.objectContaining({
        resource: "ApiProduct/shop",
        file: "config/p.yaml",
        line: 1,
        reason: expect.any(String) as string,
        hint: expect.stringContaining("gatesync state resolve ApiProduct/shop --accept") as string,
      }),
    ]);
    expect(blocked.blockedNotLogged).toBeUndefined();
    const finished = await lineAfter(seen, "run finished");
    expect(finished).toMatchObject({ applied: 0, failed: 0, inDoubt: 0, blocked: 1 });
  });

  it("counts a run that changed nothing as `unchanged` in gatesync_runs_total, not `applied`", async () => {
    const seen = logLines().length;
    expect((await call(`${daemon.url}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } })).status).toBe(202);
    expect(await lineAfter(seen, "run finished")).toMatchObject({ applied: 0 });
    const metrics = (await call(`${daemon.url}/metrics`)).text;
    // the first run created both resources, the second changed the key; the rename run and this one changed nothing
    expect(metrics).toMatch(/^gatesync_runs_total\{result="applied"\} 2$/m);
    expect(metrics).toMatch(/^gatesync_runs_total\{result="unchanged"\} 2$/m);
  });

  it("says why it refused a commit: each error with its code, file, line and column, bounded, with the number left out", async () => {
    // twelve keys with a rate that is no number: twelve located errors
    const keys = Array.from({ length: 12 }, (_, i) => orgKey({ name: `k${i}`, rate: "fast" })).join("---\n");
    const seen = await pushAndSync({ "k.yaml": keys }, "twelve bad keys");
    const refused = await lineAfter(seen, "revision is invalid: nothing applied; the last good commit stays in force");
    expect(refused.level).toBe(50);
    expect(refused.errors).toBe(12);
    expect(refused.diagnostics).toHaveLength(10);
    expect(refused.diagnosticsNotLogged).toBe(2);
    const lines = keys.split("\n");
    const firstRate = lines.findIndex((l) => l.startsWith("  rate: fast")) + 1;
    expect((refused.diagnostics as unknown[])[0]).toEqual({
      code: "SCHEMA_VIOLATION",
      file: "config/k.yaml",
      line: firstRate,
      column: 9,
      resource: "OrgKey/k0",
      path: "spec.rate",
      message: expect.stringContaining("must be") as string,
    });
    expect(refused.commit).toBe(git(work, "rev-parse", "HEAD"));
  });
});
