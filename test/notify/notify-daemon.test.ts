/**
 * Notifications from a real daemon (in this process) following a real git repository, applying
 * to the sandbox: every event reaches local receivers on loopback — failures included — signed;
 * GitHub and GitLab commit statuses arrive in their documented request shapes; a receiver that
 * is down or slow delays no run; deliveries show in /metrics; no secret leaves.
 */
import { createHmac } from "node:crypto";
import { writeFile } from "node:fs/promises";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import type { Daemon } from "../../src/daemon/daemon.js";
import { startDaemon } from "../../src/daemon/daemon.js";
import type { RunReport } from "../../src/run/run-report.js";
import { silentLogger } from "../../src/logger.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { committedRepo, git } from "../helpers/git-repo.js";
import type { Receiver } from "../helpers/receiver.js";
import { startReceiver } from "../helpers/receiver.js";
import { call, testCredentials, testSandbox } from "../helpers/sandbox.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { eventually } from "../helpers/eventually.js";
import { doc, product } from "../helpers/resources.js";

afterAll(removeTempRepos);

const hmacSecret = "notify-hmac-secret-value";
const env = {
  GW_KEY: testCredentials.gatewayKey,
  PORTAL_KEY: testCredentials.portalKey,
  HOOK_SECRET: hmacSecret,
  SLACK_URL: "",
  GH_TOKEN: "github-token-value-123",
  GL_TOKEN: "gitlab-token-value-456",
};

const shop = product({ name: "shop" });

const until = <T>(read: () => T, check: (v: T) => boolean, ms = 15_000): Promise<T> => eventually(read, check, ms, undefined, 25);

describe("notifications from the daemon", () => {
  let sandbox: SandboxHandle | undefined;
  let daemon: Daemon | undefined;
  const receivers: Receiver[] = [];
  afterAll(async () => {
    await daemon?.stop();
    await sandbox?.stop();
    for (const r of receivers) await r.stop();
  });

  it("tells every receiver of every event, failures included, with commit statuses; down and slow receivers delay no run", async () => {
    sandbox = await testSandbox();
    const [hook, slack, forge, slow] = await Promise.all([startReceiver(), startReceiver(), startReceiver(), startReceiver()]);
    receivers.push(hook, slack, forge, slow);
    env.SLACK_URL = `${slack.url}/services/T0/B0/slack-token-xyz`;
    const repo = await committedRepo({ "config/k.yaml": doc("OrgKey", "k", "keyId: k\nrate: 1") });
    const dir = await tempRepo({});
    await writeFile(
      path.join(dir, "gatesync.yaml"),
      `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: ${JSON.stringify(repo.dir)}, branch: main, subdirectory: config, cacheDir: ./cache } }
targets:
  gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY }
  portal: { url: ${sandbox.urls.portal}, credentialEnv: PORTAL_KEY }
state: { backend: sqlite, path: ./state.db }
retries: { max: 1, baseDelayMs: 10, maxDelayMs: 20, timeoutMs: 2000 }
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0" }
notifications:
  receivers:
    - { name: hook, type: webhook, url: ${hook.url}/gatesync, secretEnv: HOOK_SECRET }
    - { name: chat, type: slack, urlEnv: SLACK_URL, events: [run-failed, in-doubt, commit-refused] }
    - { name: github, type: github, apiUrl: ${forge.url}/api/v3, repository: acme/shop-config, tokenEnv: GH_TOKEN }
    - { name: gitlab, type: gitlab, apiUrl: ${forge.url}/api/v4, project: acme/shop-config, tokenEnv: GL_TOKEN, context: gatesync/prod }
    - { name: down, type: webhook, url: "http://127.0.0.1:1/nothing", secretEnv: HOOK_SECRET }
    - { name: slow, type: webhook, url: "${slow.url}/slow?delay=4000", secretEnv: HOOK_SECRET }
  delivery: { attempts: 2, baseDelayMs: 50, maxDelayMs: 100, timeoutMs: 1000 }
`,
    );
    const runs: RunReport[] = [];
    daemon = await startDaemon({ config: await loadConfig(path.join(dir, "gatesync.yaml")), env, logger: silentLogger(), onRun: (r) => runs.push(r) });
    const commits: string[] = [repo.commit];
    const push = async (file: string, text: string): Promise<string> => {
      await writeFile(path.join(repo.dir, "config", file), text);
      git(repo.dir, "add", "-A");
      git(repo.dir, "commit", "-q", "-m", file);
      commits.push(git(repo.dir, "rev-parse", "HEAD"));
      return commits.at(-1)!;
    };
    const events = (): string[] => hook.received.map((r) => (JSON.parse(r.body) as { event: string }).event);

    // 1. a good commit: pending then success, no event
    await until(
      () => runs.length,
      (n) => n >= 1,
    );
    expect(runs[0]!.result).toBe("applied");
    // 2. a commit refused by validation
    await push("bad.yaml", "kind: OrgKey\nmetadata: {\n");
    expect((await daemon.reconciler.runOnce("sync")).result).toBe("invalid");
    await until(events, (e) => e.includes("commit-refused"));
    // 3. a run that fails: the gateway answers 500 to everything
    await push("bad.yaml", doc("OrgKey", "k2", "keyId: k2"));
    sandbox.inspect.setFaults({ errorRate: 1, interfaces: ["gateway"] });
    expect((await daemon.reconciler.runOnce("sync")).result).toBe("partial");
    await until(events, (e) => e.includes("run-failed"));
    // 4. recovered
    sandbox.inspect.setFaults({ errorRate: 0 });
    expect((await daemon.reconciler.runOnce("sync")).result).toBe("applied");
    await until(events, (e) => e.includes("recovered"));
    // 5. a create whose answer is lost: in doubt, needs a person
    await push("p.yaml", shop);
    sandbox.inspect.setFaults({ lostResponseRate: 1, interfaces: ["portal"] });
    expect((await daemon.reconciler.runOnce("sync")).summary?.inDoubt).toHaveLength(1);
    await until(events, (e) => e.includes("in-doubt"));
    sandbox.inspect.setFaults({ lostResponseRate: 0 });

    expect(events()).toEqual(["commit-refused", "run-failed", "recovered", "in-doubt"]);
    for (const r of hook.received) {
      expect(r.headers["x-gatesync-signature"]).toBe(`sha256=${createHmac("sha256", hmacSecret).update(r.body).digest("hex")}`);
      expect(r.headers["x-gatesync-delivery"]).toMatch(/^[0-9a-f-]{36}$/);
      const body = JSON.parse(r.body) as { statusUrl: string; commit: string; summary: string };
      expect(body.statusUrl).toBe(`${daemon.url!}/status`);
      expect(commits).toContain(body.commit);
      expect(body.summary).not.toBe("");
    }
    const refused = JSON.parse(hook.received[0]!.body) as { errors: number; commit: string };
    expect(refused).toMatchObject({ errors: 1, commit: commits[1] });
    const inDoubt = JSON.parse(hook.received[3]!.body) as { inDoubt: Array<{ id: string }> };
    expect(inDoubt.inDoubt.map((x) => x.id)).toEqual(["ApiProduct/shop"]);
    // Slack gets the events it asked for, as an incoming-webhook message
    await until(
      () => slack.received.length,
      (n) => n >= 3,
    );
    expect(slack.received.map((r) => r.url)).toEqual(Array(3).fill("/services/T0/B0/slack-token-xyz"));
    expect(slack.received.map((r) => (JSON.parse(r.body) as { text: string }).text.split(":")[0])).toEqual(["*commit-refused*", "*run-failed*", "*in-doubt*"]);

    // commit statuses, in GitHub's and GitLab's documented shapes
    await until(
      () => forge.received.length,
      (n) => n >= 20,
    );
    const gh = forge.received.filter((r) => r.url.startsWith("/api/v3/"));
    const gl = forge.received.filter((r) => r.url.startsWith("/api/v4/"));
    for (const r of gh) {
      expect(r.method).toBe("POST");
      expect(r.url).toMatch(/^\/api\/v3\/repos\/acme\/shop-config\/statuses\/[0-9a-f]{40}$/);
      expect(r.headers.authorization).toBe("Bearer github-token-value-123");
      expect(r.headers.accept).toBe("application/vnd.github+json");
      const b = JSON.parse(r.body) as Record<string, string>;
      expect(Object.keys(b).sort()).toEqual(["context", "description", "state", "target_url"]);
      expect(["pending", "success", "failure", "error"]).toContain(b.state);
      expect(b.context).toBe("gatesync");
      expect(b.target_url).toBe(`${daemon.url!}/status`);
      expect(b.description!.length).toBeLessThanOrEqual(140);
    }
    for (const r of gl) {
      expect(r.url).toMatch(/^\/api\/v4\/projects\/acme%2Fshop-config\/statuses\/[0-9a-f]{40}$/);
      expect(r.headers["private-token"]).toBe("gitlab-token-value-456");
      const b = JSON.parse(r.body) as Record<string, string>;
      expect(Object.keys(b).sort()).toEqual(["description", "name", "state", "target_url"]);
      expect(["pending", "running", "success", "failed", "canceled"]).toContain(b.state);
      expect(b.name).toBe("gatesync/prod");
    }
    const states = (list: typeof gh): string[] => list.map((r) => `${r.url.slice(-40, -33)} ${(JSON.parse(r.body) as { state: string }).state}`);
    const short = commits.map((c) => c.slice(0, 7));
    expect(states(gh)).toEqual([
      `${short[0]} pending`,
      `${short[0]} success`,
      `${short[1]} pending`,
      `${short[1]} failure`,
      `${short[2]} pending`,
      `${short[2]} failure`,
      `${short[2]} pending`,
      `${short[2]} success`,
      `${short[3]} pending`,
      `${short[3]} error`,
    ]);
    expect(states(gl).map((s) => s.split(" ")[1])).toEqual([
      "running",
      "success",
      "running",
      "failed",
      "running",
      "failed",
      "running",
      "success",
      "running",
      "failed",
    ]);
    expect((JSON.parse(gh.at(-1)!.body) as { description: string }).description).toBe("needs a person: 1 resource in doubt");

    // the down and slow receivers held no run back
    for (const r of runs) expect(r.durationMs).toBeLessThan(2500);
    expect(slow.received.length).toBeGreaterThan(0);
    // deliveries to the down receiver end within attempts × backoff, after the runs
    for (let i = 0; i < 100 && !/receiver="down",event="in-doubt",outcome="failed"/.test((await call(`${daemon.url!}/metrics`)).text); i++) await sleep(50);
    const later = (await call(`${daemon.url!}/metrics`)).text;
    expect(later).toMatch(/gatesync_notifications_total\{receiver="hook",event="run-failed",outcome="delivered"\} 1/);
    expect(later).toMatch(/gatesync_notifications_total\{receiver="down",event="commit-refused",outcome="failed"\} 1/);
    expect(later).toMatch(/gatesync_notification_attempts_total\{receiver="down",code="error"\} \d+/);
    expect(later).toMatch(/gatesync_commits_behind 1/);
    expect(later).toMatch(/gatesync_last_success_age_seconds \d/);

    // nothing secret left the process
    const everything = [...hook.received, ...slack.received, ...forge.received].map((r) => r.body).join("\n");
    for (const secret of [
      hmacSecret,
      "github-token-value-123",
      "gitlab-token-value-456",
      testCredentials.gatewayKey,
      testCredentials.portalKey,
      "slack-token-xyz",
    ])
      expect(everything).not.toContain(secret);
  });
});
