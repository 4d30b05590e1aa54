/**
 * The daemon's runs on a generated repository pushed to a local git remote: the first (apply
 * everything), a no-op run (commit unchanged), and a run after a one-file change.
 */
import { execFileSync } from "node:child_process";
import { cp, mkdtemp, readFile, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { managementDispatcher } from "../src/apply/http-client.js";
import type { GatesyncConfig } from "../src/config/config.js";
import { configFromDocument } from "../src/config/config.js";
import { DaemonMetrics } from "../src/daemon/metrics/metrics.js";
import { Reconciler } from "../src/daemon/loop/reconciler.js";
import { silentLogger } from "../src/logger.js";
import { SqliteStateBackend } from "../src/record/sqlite/sqlite-backend.js";
import { startSandbox } from "../src/sandbox/sandbox.js";
import type { SandboxHandle } from "../src/sandbox/sandbox.js";
import { GitSource } from "../src/source/git-source.js";
import { RepositoryValidator } from "../src/validate/repository/repository-validator.js";
import { credentials, env, quick } from "./common.js";
import type { Figure } from "./figures.js";
import { figure } from "./figures.js";
import type { Generated } from "./generate.js";

export function benchConfig(dir: string, sandbox: SandboxHandle, gitUrl: string, rate: { concurrency: number; requestsPerSecond: number }): GatesyncConfig {
  return configFromDocument(
    {
      apiVersion: "gatesync.dev/v1",
      kind: "GatesyncConfig",
      source: { git: { url: gitUrl, branch: "main", subdirectory: "config", cacheDir: path.join(dir, "cache") } },
      secrets: { env: ["BENCH_SECRET"] },
      targets: {
        gateway: {
          url: sandbox.urls.gateway,
          credentialEnv: "GW_KEY",
          batch: { listenPath: "/gw-batch/", apiId: "gw-loopback", keyEnv: "BATCH_KEY", maxSize: 50 },
          rateLimit: rate,
        },
        portal: { url: sandbox.urls.portal, credentialEnv: "PORTAL_KEY", rateLimit: rate },
        dashboard: { url: sandbox.urls.dashboard, tokenEnv: "DASH_KEY", rateLimit: rate },
        llm: { url: sandbox.urls.llm, credentialEnv: "LLM_KEY", rateLimit: rate },
      },
      state: { backend: "sqlite", path: path.join(dir, "state.db") },
      retries: { max: 4, baseDelayMs: 50, maxDelayMs: 500, timeoutMs: 30_000 },
    },
    undefined,
    dir,
  );
}

const git = (cwd: string, ...args: string[]): string =>
  execFileSync("git", ["-c", "user.email=b@example.com", "-c", "user.name=bench", ...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] });

export async function daemonRuns(g: Generated): Promise<{ full: Figure; noop: Figure; noopCalls: number; oneFile: Figure }> {
  const full: number[] = [];
  const noop: number[] = [];
  const oneFile: number[] = [];
  let noopCalls = 0;
  const n = quick ? 2 : 3;
  for (let rep = 0; rep < n; rep++) {
    const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-daemon-"));
    const repo = path.join(dir, "work");
    execFileSync("git", ["init", "-q", "--bare", "-b", "main", path.join(dir, "origin.git")]);
    execFileSync("git", ["clone", "-q", path.join(dir, "origin.git"), repo], { stdio: "ignore" });
    git(repo, "checkout", "-q", "-b", "main");
    await cp(path.dirname(g.root), repo, { recursive: true });
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "bench");
    git(repo, "push", "-q", "origin", "main");
    const fixtures = {
      ...g.fixtures,
      apis: [
        ...(g.fixtures.apis ?? []),
        { id: "gw-loopback", listenPath: "/gw-batch/", upstream: "${sandbox}/gw/", authentication: true, batchProcessing: true },
      ],
      keys: [{ key: env.BATCH_KEY, apis: ["gw-loopback"] }],
    };
    const sandbox = await startSandbox({ credentials, fixtures, logSize: 1000 });
    const config = benchConfig(dir, sandbox, path.join(dir, "origin.git"), { concurrency: 32, requestsPerSecond: 5000 });
    const dispatcher = managementDispatcher();
    const validator = new RepositoryValidator();
    const state = new SqliteStateBackend(path.join(dir, "state.db"));
    const reconciler = new Reconciler({
      config,
      configHash: "bench",
      source: new GitSource({ url: path.join(dir, "origin.git"), branch: "main", subdirectory: "config", cacheDir: path.join(dir, "cache") }),
      state,
      validator,
      env,
      logger: silentLogger(),
      dispatcher,
      metrics: new DaemonMetrics(),
    });
    const first = await reconciler.runOnce("start");
    if (first.result !== "applied") throw new Error(`full run: ${first.result} ${first.error ?? JSON.stringify(first.summary?.failed.slice(0, 3))}`);
    full.push(first.durationMs);
    const callsBefore = sandbox.inspect.calls().log.length;
    const again = await reconciler.runOnce("schedule");
    if (again.result !== "noop") throw new Error(`no-op run: ${again.result}`);
    noop.push(again.durationMs);
    noopCalls += sandbox.inspect.calls().log.length - callsBefore;
    // one file changes: ten org keys get a new rate
    const target = g.files.find((f) => f.startsWith("orgkey/"))!;
    const file = path.join(repo, "config", target);
    await writeFile(
      file,
      (await readFile(file, "utf8")).replace(/rate: (\d+)/g, (_m, r: string) => `rate: ${Number(r) + 1}`),
    );
    git(repo, "commit", "-q", "-am", "one file");
    git(repo, "push", "-q", "origin", "main");
    const changed = await reconciler.runOnce("webhook");
    if (changed.result !== "applied" || changed.summary?.applied.length !== 10)
      throw new Error(`one-file run: ${changed.result} ${changed.summary?.applied.length}`);
    oneFile.push(changed.durationMs);
    await reconciler.stop();
    await validator.close();
    await state.close();
    await dispatcher.close();
    await sandbox.stop();
    await rm(dir, { recursive: true, force: true });
  }
  return { full: figure(full), noop: figure(noop), noopCalls, oneFile: figure(oneFile) };
}
