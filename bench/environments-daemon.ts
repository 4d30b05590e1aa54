/**
 * The parts bench/environments.ts and bench/environments-side-by-side.ts share: the daemon of
 * 20 environments (a spawned `gatesync run` with the manifest's NODE_OPTIONS, one sandbox per
 * environment in this process), its config, its /status, and the rounds of runs a trigger makes.
 */
import { spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import type { ChildProcess } from "node:child_process";
import { readFile } from "node:fs/promises";
import { setTimeout as sleep } from "node:timers/promises";
import { startSandbox } from "../src/sandbox/sandbox.js";
import type { SandboxHandle } from "../src/sandbox/sandbox.js";
import { cli } from "./cold.js";
import { credentials, env } from "./common.js";
import type { Generated } from "./generate.js";
import { manifestMemory } from "./memory-limit.js";

export const count = Number(process.env.BENCH_ENVIRONMENTS ?? 20);
export const names = Array.from({ length: count }, (_, i) => `e${String(i + 1).padStart(2, "0")}`);
export const syncToken = "bench-sync-token";
const hookSecret = "bench-webhook-secret";

export interface EnvStatus {
  environment: string;
  leader: string | null;
  synced: boolean;
  lastRun: { result: string; reason: string; startedAt: string; durationMs: number; calls?: Record<string, number> } | null;
}
export interface Status {
  environments: EnvStatus[];
  fleet?: { replica: string; leads: string[] };
}

export function configText(g: Generated, boxes: readonly SandboxHandle[], state: string, rates: ReadonlyMap<string, number>): string {
  const envs = names
    .map((n, i) => {
      const b = boxes[i]!.urls;
      return `  ${n}:
    values: { bench_rate: ${rates.get(n) ?? 7} }
    targets:
      gateway: { url: ${b.gateway}, credentialEnv: GW_KEY, rateLimit: { concurrency: 32, requestsPerSecond: 5000 } }
      portal: { url: ${b.portal}, credentialEnv: PORTAL_KEY, rateLimit: { concurrency: 32, requestsPerSecond: 5000 } }
      dashboard: { url: ${b.dashboard}, tokenEnv: DASH_KEY, rateLimit: { concurrency: 32, requestsPerSecond: 5000 } }
      llm: { url: ${b.llm}, credentialEnv: LLM_KEY, rateLimit: { concurrency: 32, requestsPerSecond: 5000 } }
`;
    })
    .join("");
  return `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ${g.root} }
secrets: { env: [BENCH_SECRET] }
targets:
  gateway: { url: http://127.0.0.1:9, credentialEnv: GW_KEY }
environments:
${envs}state: ${state}
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN, webhookSecretEnv: HOOK_SECRET }
retries: { max: 4, baseDelayMs: 50, maxDelayMs: 500, timeoutMs: 30000 }
`;
}

export interface Daemon {
  readonly child: ChildProcess;
  readonly url: string;
  output(): string;
}

export async function spawnDaemon(config: string, extra: Record<string, string> = {}): Promise<Daemon> {
  const manifest = manifestMemory();
  const child = spawn(process.execPath, [cli, "run", "--config", config], {
    env: {
      ...process.env,
      ...env,
      SYNC_TOKEN: syncToken,
      HOOK_SECRET: hookSecret,
      GATESYNC_LOG_LEVEL: "info",
      GATESYNC_LOG_FORMAT: "json",
      ...(manifest.nodeOptions === undefined ? {} : { NODE_OPTIONS: manifest.nodeOptions }),
      ...extra,
    },
    stdio: ["ignore", "pipe", "pipe"],
  });
  let out = "";
  let url: string | undefined;
  const take = (b: Buffer): void => {
    out = (out + b.toString()).slice(-20_000);
    url ??= /"url":"(http:\/\/127\.0\.0\.1:\d+)"/.exec(out)?.[1];
  };
  child.stdout.on("data", take);
  child.stderr.on("data", take);
  for (let i = 0; i < 1200; i++) {
    if (url !== undefined) return { child, url, output: () => out };
    if (child.exitCode !== null) break;
    await sleep(100);
  }
  throw new Error(`the daemon did not listen:\n${out.slice(-3000)}`);
}

export async function status(url: string): Promise<Status> {
  const res = await fetch(`${url}/status`);
  return (await res.json()) as Status;
}

/** Polls `read` (a failed read counts as not yet) every `pauseMs` until `ok`, for at most `ms`. */
export async function until<T>(read: () => Promise<T> | T, ok: (v: T) => boolean, ms: number, what: string, pauseMs = 100): Promise<T> {
  const end = Date.now() + ms;
  for (;;) {
    const v = await Promise.resolve()
      .then(read)
      .catch(() => undefined);
    if (v !== undefined && ok(v)) return v;
    if (Date.now() > end) throw new Error(`timed out waiting ${what}`);
    await sleep(pauseMs);
  }
}

export async function peakRssMb(pid: number): Promise<number> {
  const text = await readFile(`/proc/${pid}/status`, "utf8").catch(() => "");
  return Number(/^VmHWM:\s+(\d+)/m.exec(text)?.[1] ?? Number.NaN) / 1024;
}

/** POST `path` (`sync`, `environments/NAME/sync`: the sync token; `hooks/git`: a signed push webhook); throws unless 202. */
export async function trigger(url: string, at: string): Promise<void> {
  const body = "{}";
  const headers: Record<string, string> =
    at === "hooks/git"
      ? { "content-type": "application/json", "x-hub-signature-256": `sha256=${createHmac("sha256", hookSecret).update(body).digest("hex")}` }
      : { authorization: `Bearer ${syncToken}` };
  const res = await fetch(`${url}/${at}`, { method: "POST", headers, ...(at === "hooks/git" ? { body } : {}) });
  if (res.status !== 202) throw new Error(`POST /${at} answered ${res.status}`);
}

/**
 * Rounds of every environment after one trigger: the wall time from the trigger to the last
 * environment's run (read every `pauseMs`), and the sum of the runs' own durations.
 */
export async function rounds(
  url: string,
  reason: "webhook" | "sync",
  n: number,
  pauseMs = 100,
): Promise<{ wallMs: number[]; runsMs: number[]; results: string[] }> {
  const wallMs: number[] = [];
  const runsMs: number[] = [];
  const results = new Set<string>();
  for (let i = 0; i < n; i++) {
    const since = new Date().toISOString();
    const t = performance.now();
    await trigger(url, reason === "sync" ? "sync" : "hooks/git");
    const s = await until(
      () => status(url),
      (x) => x.environments.every((e) => e.lastRun !== null && e.lastRun.reason === reason && e.lastRun.startedAt >= since),
      600_000,
      `for the ${reason} round`,
      pauseMs,
    );
    wallMs.push(Math.round(performance.now() - t));
    runsMs.push(s.environments.reduce((sum, e) => sum + (e.lastRun?.durationMs ?? 0), 0));
    for (const e of s.environments) results.add(e.lastRun!.result);
  }
  return { wallMs, runsMs, results: [...results] };
}

export const writes = (b: SandboxHandle): number => b.inspect.calls().log.filter((c) => !c.internal && c.method !== "GET").length;

export async function sandboxes(g: Generated): Promise<SandboxHandle[]> {
  const boxes: SandboxHandle[] = [];
  for (let i = 0; i < count; i++) boxes.push(await startSandbox({ credentials, fixtures: g.fixtures, logSize: 5000 }));
  return boxes;
}

export async function stopDaemon(d: Daemon): Promise<void> {
  const closed = new Promise((resolve) => d.child.once("close", resolve));
  d.child.kill("SIGTERM");
  await closed;
}
