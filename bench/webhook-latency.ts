/**
 * `BENCH_PARTS=webhook`: what a team waits for after `git push` — the examples in a real git
 * repository (a bare origin and a checkout), `gatesync run` following its branch as a process
 * of its own (the compiled CLI, the manifest's NODE_OPTIONS), the sandbox as another; then
 * `BENCH_WEBHOOK_COMMITS` commits (default 20), each changing one value of one resource, pushed,
 * announced by a signed push webhook, and timed from the webhook's sending to the daemon's
 * "run finished" line for that commit (its pino `time`, the same clock). Each commit is sent
 * once the previous one is applied, so no run waits for another. Writes
 * bench/results.webhook.json; docs/dev/performance.md shows its table.
 *
 *   BENCH_WEBHOOK_BEFORE=/tmp/before  # also another checkout's daemon (built: its bin/gatesync.js), in rounds
 *                                     # interleaved with this one's (before, after, …: BENCH_WEBHOOK_ROUNDS, default 4)
 *   BENCH_NODE_ARGS="--cpu-prof …"    # node arguments for the daemon (a profile of its runs)
 */
import { execFileSync, spawn } from "node:child_process";
import { createHmac } from "node:crypto";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { fileURLToPath } from "node:url";
import { request } from "undici";
import { loadFixtures } from "../src/sandbox/fixtures.js";
import { cli } from "./cold.js";
import { loadNow, log, resultsHead } from "./common.js";
import { figure } from "./figures.js";
import type { Figure } from "./figures.js";
import { manifestMemory } from "./memory-limit.js";
import { publishTable } from "./publish-table.js";
import { startSandboxChild } from "./sandbox-child.js";
import { credentials, exampleEnv } from "./startup.js";
import { webhookResultsPath } from "./webhook-table.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const examples = path.resolve(here, "../examples");
const hookSecret = "bench-webhook-secret";
const daemonEnv = { ...exampleEnv, HOOK_SECRET: hookSecret };

/** Before and after a change, interleaved: each side's commits pooled over its rounds. */
export interface WebhookComparison {
  readonly before: string;
  readonly rounds: number;
  readonly beforeMs: Figure;
  readonly afterMs: Figure;
  /** after's median / before's. */
  readonly ratio: number;
}

export interface WebhookFigures {
  readonly commits: number;
  /** From the webhook's sending to "run finished" of its commit, per commit. */
  readonly latencyMs: Figure & { readonly p90: number };
  /** Of that, the run after its fetch: from its "run started" line (load, plan, apply) to "run finished". */
  readonly runMs: Figure;
  readonly samples: readonly number[];
}

const git = (cwd: string, ...args: string[]): string =>
  execFileSync("git", ["-c", "user.email=bench@example.com", "-c", "user.name=bench", ...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

/** Commits and pushes what the checkout holds; returns the commit. */
function push(work: string, message: string): string {
  git(work, "add", "-A");
  git(work, "commit", "-q", "-m", message);
  git(work, "push", "-q", "origin", "HEAD:main");
  return git(work, "rev-parse", "HEAD").trim();
}

interface LogLine {
  readonly msg?: string;
  /** ISO 8601, to the millisecond (the logger's `isoTime`). */
  readonly time?: string;
  readonly commit?: string;
  readonly url?: string;
}

/** The daemon's JSON lines, as they arrive. */
class DaemonLog {
  readonly lines: LogLine[] = [];
  private rest = "";
  take(chunk: Buffer): void {
    const text = this.rest + chunk.toString();
    const parts = text.split("\n");
    this.rest = parts.pop()!;
    for (const p of parts) {
      try {
        this.lines.push(JSON.parse(p) as LogLine);
      } catch {
        // not a log line
      }
    }
  }
  async waitFor(match: (l: LogLine) => boolean, ms: number): Promise<LogLine> {
    const end = Date.now() + ms;
    for (;;) {
      const found = this.lines.find(match);
      if (found !== undefined) return found;
      if (Date.now() > end) throw new Error(`the daemon did not log what was awaited within ${ms} ms; last lines: ${JSON.stringify(this.lines.slice(-5))}`);
      await sleep(2);
    }
  }
}

function configText(dir: string, urls: Readonly<Record<"gateway" | "portal" | "dashboard" | "llm", string>>): string {
  return `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source:
  git: { url: ${path.join(dir, "origin.git")}, branch: main, subdirectory: config, cacheDir: ./cache }
targets:
  gateway: { url: ${urls.gateway}, credentialEnv: GW_ADMIN_KEY, batch: { listenPath: /gw-batch/, apiId: gw-loopback, keyEnv: GW_BATCH_KEY } }
  portal: { url: ${urls.portal}, credentialEnv: PORTAL_API_KEY, appTypeProviders: [3] }
  dashboard: { url: ${urls.dashboard}, tokenEnv: DASHBOARD_TOKEN }
  llm: { url: ${urls.llm}, credentialEnv: LLM_API_KEY }
state: { backend: sqlite, path: ./state/state.db }
secrets: { fileRoot: ./secrets, env: [PETSTORE_MOBILE_CLIENT_SECRET, CRM_HOOK_TOKEN, CHAT_WEBHOOK_TOKEN] }
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0", webhookSecretEnv: HOOK_SECRET }
`;
}

async function hook(url: string, delivery: number): Promise<void> {
  const body = JSON.stringify({ ref: "refs/heads/main", after: String(delivery) });
  const signature = `sha256=${createHmac("sha256", hookSecret).update(body).digest("hex")}`;
  const res = await request(`${url}/hooks/git`, {
    method: "POST",
    headers: { "content-type": "application/json", "x-hub-signature-256": signature, "x-github-delivery": `bench-${delivery}` },
    body,
  });
  await res.body.dump();
  if (res.statusCode !== 202) throw new Error(`the webhook was answered ${res.statusCode}`);
}

export async function webhookFigures(commits: number, daemonCli = cli): Promise<WebhookFigures> {
  const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-webhook-"));
  const sandbox = await startSandboxChild({ gatesync: [cli], fixtures: await loadFixtures(path.join(examples, "sandbox-fixtures.yaml")), dir, credentials });
  const daemonLog = new DaemonLog();
  let daemon: ReturnType<typeof spawn> | undefined;
  try {
    execFileSync("git", ["init", "-q", "--bare", "-b", "main", path.join(dir, "origin.git")]);
    const work = path.join(dir, "work");
    execFileSync("git", ["clone", "-q", path.join(dir, "origin.git"), work], { stdio: "ignore" });
    git(work, "checkout", "-q", "-b", "main");
    await cp(path.join(examples, "config"), path.join(work, "config"), { recursive: true });
    push(work, "the examples");
    await cp(path.join(examples, "secrets"), path.join(dir, "secrets"), { recursive: true });
    await writeFile(path.join(dir, "gatesync.yaml"), configText(dir, sandbox.urls));
    const manifest = manifestMemory();
    daemon = spawn(
      process.execPath,
      [...(process.env.BENCH_NODE_ARGS ?? "").split(" ").filter(Boolean), daemonCli, "run", "--config", path.join(dir, "gatesync.yaml")],
      {
        cwd: dir,
        env: {
          ...process.env,
          ...daemonEnv,
          GATESYNC_LOG_LEVEL: "info",
          GATESYNC_LOG_FORMAT: "json",
          ...(manifest.nodeOptions === undefined ? {} : { NODE_OPTIONS: manifest.nodeOptions }),
        },
        stdio: ["ignore", "pipe", "pipe"],
      },
    );
    daemon.stdout!.on("data", (b: Buffer) => daemonLog.take(b));
    daemon.stderr!.on("data", (b: Buffer) => daemonLog.take(b));
    const url = (await daemonLog.waitFor((l) => typeof l.url === "string" && l.url.startsWith("http://"), 60_000)).url!;
    await daemonLog.waitFor((l) => l.msg === "run finished", 60_000);
    log(`[webhook] the daemon applied the examples; ${commits} commits follow`);
    const file = path.join(work, "config/portal/webhooks.yaml");
    const samples: number[] = [];
    const runs: number[] = [];
    for (let i = 1; i <= commits; i++) {
      await writeFile(file, (await readFile(file, "utf8")).replace(/Timeout: \d+/, `Timeout: ${10 + i}`));
      const commit = push(work, `audit timeout ${10 + i} s`);
      const sent = Date.now();
      await hook(url, i);
      const finished = await daemonLog.waitFor((l) => l.msg === "run finished" && l.commit === commit, 30_000);
      const started = await daemonLog.waitFor((l) => l.msg === "run started" && l.commit === commit, 1_000);
      const at = (l: LogLine): number => Date.parse(l.time!);
      samples.push(at(finished) - sent);
      runs.push(at(finished) - at(started));
    }
    const sorted = [...samples].sort((a, b) => a - b);
    return {
      commits,
      latencyMs: { ...figure(samples), p90: sorted[Math.min(sorted.length - 1, Math.ceil(sorted.length * 0.9) - 1)]! },
      runMs: figure(runs),
      samples,
    };
  } finally {
    daemon?.kill("SIGTERM");
    await sandbox.stop().catch(() => undefined);
    await rm(dir, { recursive: true, force: true });
  }
}

/** `BENCH_PARTS=webhook`: writes bench/results.webhook.json and the tables of docs/dev/performance.md. */
export async function webhookOnly(): Promise<void> {
  const started = Date.now();
  const start = loadNow();
  const commits = Number(process.env.BENCH_WEBHOOK_COMMITS ?? 20);
  const webhook = await webhookFigures(commits);
  log(`[webhook] p50 ${webhook.latencyMs.median} ms, p90 ${webhook.latencyMs.p90} ms (${webhook.samples.join(", ")})`);
  const before = process.env.BENCH_WEBHOOK_BEFORE;
  const compare = before === undefined ? undefined : await beforeAndAfter(before, commits, Number(process.env.BENCH_WEBHOOK_ROUNDS ?? 4));
  const results = {
    ...resultsHead("webhook", start, started),
    webhook,
    ...(compare === undefined ? {} : { compare }),
  };
  await writeFile(webhookResultsPath, `${JSON.stringify(results, null, 2)}\n`);
  await publishTable();
}

/** `rounds` rounds of `commits` commits each side, before then after, the same bench each time. */
async function beforeAndAfter(checkout: string, commits: number, rounds: number): Promise<WebhookComparison> {
  const beforeCli = path.resolve(checkout, "bin/gatesync.js");
  const beforeSamples: number[] = [];
  const afterSamples: number[] = [];
  for (let r = 1; r <= rounds; r++) {
    beforeSamples.push(...(await webhookFigures(commits, beforeCli)).samples);
    afterSamples.push(...(await webhookFigures(commits)).samples);
    log(`[webhook] round ${r}/${rounds}: before p50 ${figure(beforeSamples).median} ms, after ${figure(afterSamples).median} ms (pooled so far)`);
  }
  const [beforeMs, afterMs] = [figure(beforeSamples), figure(afterSamples)];
  const commit = execFileSync("git", ["rev-parse", "--short", "HEAD"], { cwd: checkout, encoding: "utf8" }).trim();
  return { before: commit, rounds, beforeMs, afterMs, ratio: Math.round((afterMs.median / beforeMs.median) * 100) / 100 };
}
