/**
 * End to end: a real bare git repository in a temp dir, the daemon as a child process, the
 * sandbox in this process. Pushes are followed through the signed webhook.
 */
import { execFileSync, spawn } from "node:child_process";
import type { ChildProcess } from "node:child_process";
import { createHmac } from "node:crypto";
import { cp, readFile, rm, writeFile } from "node:fs/promises";
import { request as httpRequest } from "node:http";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { writeFileSync } from "node:fs";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { gitRemote } from "../helpers/git-remote.js";
import { exampleSecrets } from "../helpers/apply.js";
import { startReceiver } from "../helpers/receiver.js";
import { cliArgs } from "../helpers/cli.js";
import { call, testCredentials, testSandbox } from "../helpers/sandbox.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const secret = "webhook-secret-for-tests";
const syncToken = "sync-token-for-tests";
let sandbox: SandboxHandle;
let dir: string;
let work: string;
let daemon: ChildProcess;
let url: string;
let stderr = "";

const git = (cwd: string, ...args: string[]): string =>
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

function push(message: string): string {
  git(work, "add", "-A");
  git(work, "commit", "-q", "-m", message);
  git(work, "push", "-q", "--force", "origin", "HEAD:main");
  return git(work, "rev-parse", "HEAD").trim();
}

function hook(body: string, headers: Record<string, string> = {}): ReturnType<typeof call> {
  const signature = `sha256=${createHmac("sha256", secret).update(body).digest("hex")}`;
  return call(`${url}/hooks/git`, { method: "POST", headers: { "content-type": "application/json", "x-hub-signature-256": signature, ...headers }, body });
}

/**
 * The status answered to a POST announcing `bytes` of body, sent before any of it: the daemon
 * refuses an oversized Content-Length unread and closes the connection, so a client still
 * writing the body may meet a reset instead of the answer (a race, not a behaviour).
 */
function announcedOnly(target: string, bytes: number): Promise<number | undefined> {
  return new Promise((resolve, reject) => {
    const req = httpRequest(target, {
      method: "POST",
      headers: { "content-type": "application/json", "content-length": bytes, "x-hub-signature-256": "sha256=00" },
    });
    req.on("response", (res) => {
      res.resume();
      resolve(res.statusCode);
      req.destroy();
    });
    req.on("error", reject);
    req.flushHeaders();
  });
}

interface Status {
  commit: string | null;
  ready: boolean;
  synced: boolean;
  lastRun: { result: string; revision: string | null; reason: string; errors?: Array<{ file: string; line: number; message: string }> } | null;
  resources: Array<{ id: string; status: string }>;
}

async function status(): Promise<Status> {
  return (await call(`${url}/status`)).body as Status;
}

/** Polls until `check` holds (at most `ms`). */
async function eventually<T>(read: () => Promise<T> | T, check: (v: T) => boolean, ms = 10_000): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await read();
    if (check(v)) return v;
    if (Date.now() > end) throw new Error(`timed out; last: ${JSON.stringify(v).slice(0, 500)}`);
    await sleep(100);
  }
}

let delivery = 0;
const payload = (): string => JSON.stringify({ ref: "refs/heads/main", delivery: ++delivery });

beforeAll(async () => {
  sandbox = await testSandbox();
  dir = await tempRepo();
  work = gitRemote(dir);
  await cp(path.join(projectRoot, "examples/config"), path.join(work, "config"), { recursive: true });
  await writeFile(path.join(work, "README.md"), "gateway config\n");
  push("initial configuration");
  await cp(path.join(projectRoot, "examples/secrets"), path.join(dir, "secrets"), { recursive: true });
  await writeFile(
    path.join(dir, "gatesync.yaml"),
    `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source:
  git: { url: ${path.join(dir, "origin.git")}, branch: main, subdirectory: config, cacheDir: ./cache }
targets:
  gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY, batch: { listenPath: /gw-batch/, apiId: gw-loopback, keyEnv: BATCH_KEY } }
  portal: { url: ${sandbox.urls.portal}, credentialEnv: PORTAL_KEY, appTypeProviders: [3] }
  dashboard: { url: ${sandbox.urls.dashboard}, tokenEnv: DASH_TOKEN }
  llm: { url: ${sandbox.urls.llm}, credentialEnv: LLM_KEY }
state: { backend: sqlite, path: ./state/state.db }
secrets: { fileRoot: ./secrets, env: [PETSTORE_MOBILE_CLIENT_SECRET, CRM_HOOK_TOKEN, CHAT_WEBHOOK_TOKEN] }
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0", webhookSecretEnv: HOOK_SECRET, syncTokenEnv: SYNC_TOKEN }
retries: { max: 2, baseDelayMs: 20, maxDelayMs: 100, timeoutMs: 5000 }
`,
  );
  daemon = spawn(process.execPath, cliArgs("run", "--config", path.join(dir, "gatesync.yaml")), {
    cwd: dir,
    env: {
      ...process.env,
      GW_KEY: testCredentials.gatewayKey,
      PORTAL_KEY: testCredentials.portalKey,
      DASH_TOKEN: testCredentials.dashboardToken,
      LLM_KEY: testCredentials.llmKey,
      BATCH_KEY: "sandbox-loopback-key",
      HOOK_SECRET: secret,
      SYNC_TOKEN: syncToken,
      GATESYNC_LOG_LEVEL: "info",
      ...exampleSecrets,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  daemon.stderr!.on("data", (b: Buffer) => (stderr += b.toString()));
  daemon.stdout!.on("data", (b: Buffer) => (stderr += b.toString()));
  const match = await eventually(
    () => /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(stderr),
    (m) => m !== null,
    20_000,
  ).catch((e: unknown) => {
    throw new Error(`${String(e)}\ndaemon output:\n${stderr}`);
  });
  url = match![1]!;
  if (process.env.DEBUG_DAEMON !== undefined) console.log(stderr);
}, 60_000);

afterAll(async () => {
  if (process.env.DEBUG_DAEMON !== undefined) writeFileSync(process.env.DEBUG_DAEMON, stderr);
  if (daemon.exitCode === null) daemon.kill("SIGKILL");
  await sandbox.stop();
  await removeTempRepos();
});

describe("gatesync run (daemon)", () => {
  it("applies the branch at start and becomes ready", async () => {
    const s = await eventually(status, (x) => x.synced, 30_000);
    expect(s.ready).toBe(true);
    expect(s.lastRun?.result).toBe("applied");
    expect(s.commit).toBe(git(work, "rev-parse", "HEAD").trim());
    expect(s.resources).toHaveLength(17);
    expect((await call(`${url}/readyz`)).status).toBe(200);
    expect((await call(`${url}/healthz`)).body).toEqual({ status: "ok" });
    expect(sandbox.inspect.store.products.size).toBe(2);
  });

  it("applies a pushed commit within seconds of a webhook", async () => {
    const file = path.join(work, "config/portal/webhooks.yaml");
    await writeFile(file, (await readFile(file, "utf8")).replace("Timeout: 5", "Timeout: 9"));
    const commit = push("longer audit timeout");
    const started = Date.now();
    expect((await hook(payload())).status).toBe(202);
    await eventually(
      () => [...sandbox.inspect.store.portalWebhooks.values()].find((w) => w.Name === "User lifecycle to audit log"),
      (w) => w?.Timeout === 9,
      10_000,
    );
    expect(Date.now() - started).toBeLessThan(10_000);
    const s = await eventually(status, (x) => x.commit === commit);
    expect(s.lastRun?.result).toBe("applied");
  });

  it("does nothing, and calls nothing, when triggered with no new commit", async () => {
    const before = sandbox.inspect.calls().log.length;
    expect((await hook(payload())).status).toBe(202);
    const s = await eventually(status, (x) => x.lastRun?.result === "noop");
    expect(s.lastRun?.reason).toBe("webhook");
    expect(sandbox.inspect.calls().log.length).toBe(before);
  });

  it("applies nothing of a commit that does not validate, shows its errors, and keeps the last good commit", async () => {
    const good = (await status()).commit;
    const before = sandbox.inspect.calls().log.length;
    await writeFile(
      path.join(work, "config/llm/settings.yaml"),
      (await readFile(path.join(work, "config/llm/settings.yaml"), "utf8")).replace("temperature: 0.0", "temperature: icy"),
    );
    await writeFile(
      path.join(work, "config/gateway/org-keys.yaml"),
      (await readFile(path.join(work, "config/gateway/org-keys.yaml"), "utf8")).replace(
        "  rate: 100\n  per: 60\n  quota_max: 10000\n",
        "  rate: 250\n  per: 60\n  quota_max: 10000\n",
      ),
    );
    const bad = push("broken settings");
    expect((await hook(payload())).status).toBe(202);
    const s = await eventually(status, (x) => x.lastRun?.result === "invalid" && x.lastRun.revision === bad);
    expect(s.commit).toBe(good);
    expect(s.lastRun?.errors?.[0]).toMatchObject({ file: "config/llm/settings.yaml", line: 30 });
    expect(sandbox.inspect.calls().log.length).toBe(before);
    expect(sandbox.inspect.store.orgKeys.get("globex")!.session.rate).toBe(100);
  });

  it("follows a force-push", async () => {
    git(work, "reset", "-q", "--hard", "HEAD~1");
    const file = path.join(work, "config/gateway/org-keys.yaml");
    const text = await readFile(file, "utf8");
    expect(text).toContain("  rate: 100\n  per: 60\n  quota_max: 10000\n");
    await writeFile(file, text.replace("  rate: 100\n  per: 60\n  quota_max: 10000\n", "  rate: 175\n  per: 60\n  quota_max: 10000\n"));
    const rewritten = push("rewritten history");
    expect((await hook(payload())).status).toBe(202);
    await eventually(
      () => sandbox.inspect.store.orgKeys.get("globex")!.session.rate,
      (rate) => rate === 175,
    );
    expect((await eventually(status, (x) => x.commit === rewritten)).lastRun?.result).toBe("applied");
  });

  it("refuses a commit addressing the batch route's loopback API, located; calls nothing, and the host it names receives nothing", async () => {
    const other = await startReceiver();
    try {
      const good = (await status()).commit;
      const before = sandbox.inspect.calls().log.length;
      await writeFile(
        path.join(work, "config/apis/loopback.yaml"),
        `apiVersion: gatesync.dev/v1\nkind: ApiDefinition\nmetadata:\n  name: loopback\nspec:\n  apiId: gw-loopback\n  query: { upstreamURL: "${other.url}" }\n  definition: { openapi: 3.1.0, info: { title: L, version: "1" }, paths: {} }\n`,
      );
      const bad = push("take the batch route");
      expect((await hook(payload())).status).toBe(202);
      const s = await eventually(status, (x) => x.lastRun?.result === "invalid" && x.lastRun.revision === bad);
      expect(s.commit).toBe(good);
      expect(s.lastRun?.errors).toEqual([
        expect.objectContaining({ file: "config/apis/loopback.yaml", line: 6, message: expect.stringContaining("addresses the batch route") as string }),
      ]);
      expect(sandbox.inspect.calls().log.length).toBe(before);
      expect(other.received).toEqual([]);
    } finally {
      await other.stop();
      git(work, "reset", "-q", "--hard", "HEAD~1");
      git(work, "push", "-q", "--force", "origin", "HEAD:main");
    }
  });

  it("refuses bad, missing and replayed webhook signatures, and oversized bodies; keeps serving", async () => {
    const body = payload();
    expect((await call(`${url}/hooks/git`, { method: "POST", headers: { "x-hub-signature-256": "sha256=deadbeef" }, body })).status).toBe(401);
    expect((await call(`${url}/hooks/git`, { method: "POST", body })).status).toBe(401);
    expect((await call(`${url}/hooks/git`, { method: "POST", headers: { "x-gitlab-token": "wrong" }, body })).status).toBe(401);
    expect((await call(`${url}/hooks/git`, { method: "POST", headers: { "x-gitlab-token": secret, "x-gitlab-event-uuid": "e-1" }, body })).status).toBe(202);
    expect((await call(`${url}/hooks/git`, { method: "POST", headers: { "x-gitlab-token": secret, "x-gitlab-event-uuid": "e-1" }, body })).status).toBe(409);
    expect(await announcedOnly(`${url}/hooks/git`, 2 * 1024 * 1024)).toBe(413);
    expect((await call(`${url}/sync`, { method: "POST", headers: { authorization: "Bearer nope" } })).status).toBe(401);
    expect((await call(`${url}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } })).status).toBe(202);
    expect((await call(`${url}/healthz`)).status).toBe(200);
  });

  it("serves metrics in the Prometheus text format", async () => {
    const r = await call(`${url}/metrics`);
    expect(r.status).toBe(200);
    expect(String(r.headers["content-type"])).toMatch(/text\/plain/);
    const lines = r.text.split("\n").filter((l) => l !== "" && !l.startsWith("#"));
    for (const line of lines) expect(line).toMatch(/^[a-zA-Z_:][a-zA-Z0-9_:]*(\{[^}]*\})? [-+0-9.eE]+|NaN|[+-]Inf$/);
    for (const name of [
      "gatesync_run_duration_seconds_bucket",
      "gatesync_runs_total",
      "gatesync_resources",
      "gatesync_interface_calls_total",
      "gatesync_batch_size_bucket",
      "gatesync_queue_depth",
      "gatesync_last_success_timestamp_seconds",
      "gatesync_commit_info",
    ]) {
      expect(
        lines.some((l) => l.startsWith(name)),
        name,
      ).toBe(true);
    }
    // the commit with broken settings and the one taking the batch route
    expect(r.text).toMatch(/gatesync_runs_total\{result="invalid"\} 2/);
    // nothing throttled these interfaces: each runs at its configured rate (the default 50/s)
    expect(r.text).toMatch(/^gatesync_interface_rate\{interface="portal"\} 50$/m);
    // the state's records by status after the last run: every example resource applied
    expect(r.text).toMatch(/^gatesync_resources\{status="applied"\} 17$/m);
    expect(r.text).toMatch(/^gatesync_resources\{status="failed"\} 0$/m);
    expect(r.text).toMatch(/^gatesync_resources\{status="in-doubt"\} 0$/m);
  });

  it("never puts a secret in its logs", () => {
    for (const s of [...Object.values(exampleSecrets), secret, syncToken, testCredentials.gatewayKey, testCredentials.portalKey, "demo-hmac-not-a-real-secret"])
      expect(stderr).not.toContain(s);
    expect(stderr).toContain('"commit":"');
    expect(stderr).toContain('"resource":"');
  });

  it("exits 0 on SIGTERM with the state intact", async () => {
    const exited = new Promise<number | null>((resolve) => daemon.on("close", resolve));
    daemon.kill("SIGTERM");
    expect(await exited).toBe(0);
    const state = new SqliteStateBackend(path.join(dir, "state/state.db"));
    const saved = await state.read();
    expect(saved.resources.size).toBe(17);
    expect([...saved.resources.values()].every((r) => r.status === "applied")).toBe(true);
    // the lock was released: another writer takes it at once
    await (await state.lock("after the daemon")).release();
    await state.close();
    await rm(path.join(dir, "cache"), { recursive: true, force: true });
  });
});
