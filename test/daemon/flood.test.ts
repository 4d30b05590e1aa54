/**
 * The daemon's server under a flood of unauthenticated requests: 600 concurrent 1 MiB POSTs
 * to /sync (wrong token), /hooks/git (bad signature) and /hooks/git (no signature), against a
 * real `gatesync run` process. Its resident memory grows by less than 50 MB, /healthz keeps
 * answering, and no run is triggered.
 */
import { spawn } from "node:child_process";
import { readFileSync } from "node:fs";
import { request } from "node:http";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { afterAll, describe, expect, it } from "vitest";
import { cliArgs } from "../helpers/cli.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const mib = Buffer.alloc(1024 * 1024, "x");

const rssOf = (pid: number): number => Number(/VmRSS:\s+(\d+) kB/.exec(readFileSync(`/proc/${pid}/status`, "utf8"))![1]) * 1024;

/** One POST with a 1 MiB body; its status, or `error` when the server cut the connection. */
function post(url: string, pathName: string, headers: Record<string, string>): Promise<number | "error"> {
  return new Promise((resolve) => {
    const req = request(
      `${url}${pathName}`,
      { method: "POST", agent: false, headers: { "content-length": String(mib.length), ...headers }, timeout: 30_000 },
      (res) => {
        res.resume();
        res.on("end", () => resolve(res.statusCode ?? 0));
        res.on("error", () => resolve(res.statusCode ?? "error"));
      },
    );
    req.on("error", () => resolve("error"));
    req.on("timeout", () => req.destroy());
    req.end(mib);
  });
}

async function healthz(url: string): Promise<boolean> {
  try {
    const r = await fetch(`${url}/healthz`, { signal: AbortSignal.timeout(5_000) });
    return r.status === 200;
  } catch {
    return false;
  }
}

describe("unauthenticated flood", () => {
  it("600 concurrent 1 MiB requests add < 50 MB of RSS, /healthz keeps answering, nothing runs", async () => {
    const dir = await tempRepo({
      "config/k.yaml": "apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: k }\nspec: { keyId: k }\n",
      "gatesync.yaml": `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: "http://127.0.0.1:1", credentialEnv: GW_KEY }
state: { backend: sqlite, path: ./state.db }
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0", webhookSecretEnv: HOOK_SECRET, syncTokenEnv: SYNC_TOKEN }
`,
    });
    const env = {
      ...process.env,
      GW_KEY: "flood-test-gateway-key",
      HOOK_SECRET: "flood-test-webhook-secret",
      SYNC_TOKEN: "flood-test-sync-token",
      GATESYNC_LOG_LEVEL: "info",
    };
    const daemon = spawn(process.execPath, cliArgs("run", "--config", path.join(dir, "gatesync.yaml")), { cwd: dir, env, stdio: ["ignore", "pipe", "pipe"] });
    let logs = "";
    daemon.stdout.on("data", (b: Buffer) => (logs += b.toString()));
    daemon.stderr.on("data", (b: Buffer) => (logs += b.toString()));
    try {
      for (let i = 0; i < 400 && !/"msg":"run (finished|failed)"|nothing applied/.test(logs); i++) await sleep(50);
      const url = /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(logs)![1]!;
      await sleep(1_000);
      const pid = daemon.pid!;
      const before = rssOf(pid);
      const runsBefore = (logs.match(/"msg":"run started"/g) ?? []).length;

      let peak = before;
      let healthy = 0;
      let unhealthy = 0;
      let flooding = true;
      const watch = (async () => {
        while (flooding) {
          peak = Math.max(peak, rssOf(pid));
          await sleep(20);
        }
      })();
      const probe = (async () => {
        while (flooding) {
          if (await healthz(url)) healthy++;
          else unhealthy++;
          await sleep(100);
        }
      })();
      const started = performance.now();
      const kinds = [
        () => post(url, "/sync", { authorization: "Bearer wrong" }),
        () => post(url, "/hooks/git", { "x-hub-signature-256": "sha256=00" }),
        () => post(url, "/hooks/git", {}),
      ];
      const results = await Promise.all(Array.from({ length: 600 }, (_, i) => kinds[i % 3]!()));
      const seconds = (performance.now() - started) / 1000;
      flooding = false;
      await Promise.all([watch, probe]);
      const after = rssOf(pid);

      const counts = new Map<string, number>();
      for (const r of results) counts.set(String(r), (counts.get(String(r)) ?? 0) + 1);
      const grown = (peak - before) / 1e6;
      process.stdout.write(
        `flood: 600 requests x 1 MiB in ${seconds.toFixed(1)} s; answers ${JSON.stringify(Object.fromEntries(counts))}; RSS ${(before / 1e6).toFixed(0)} MB before, peak +${grown.toFixed(1)} MB, ${(after / 1e6).toFixed(0)} MB after; /healthz ${healthy} ok, ${unhealthy} failed\n`,
      );
      expect(grown).toBeLessThan(50);
      expect(healthy).toBeGreaterThan(0);
      expect(unhealthy).toBe(0);
      expect(await healthz(url)).toBe(true);
      // nobody got in: every answer is a refusal (or a cut connection), and no run started
      expect([...counts.keys()].every((k) => ["401", "503", "error"].includes(k))).toBe(true);
      expect((logs.match(/"msg":"run started"/g) ?? []).length).toBe(runsBefore);
    } finally {
      daemon.kill("SIGTERM");
      await new Promise((resolve) => daemon.on("close", resolve));
    }
  }, 120_000);
});
