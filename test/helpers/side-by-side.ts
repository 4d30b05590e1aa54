/**
 * A daemon of several environments following a real bare git repository, each environment on a
 * sandbox gateway of its own or sharing one; the test pushes commits, asks for a sync over HTTP
 * and reads what each gateway received (its call log) and every run's report and plan.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import type { RunReport } from "../../src/run/run-report.js";
import { loadConfig } from "../../src/config/config.js";
import { startDaemon } from "../../src/daemon/daemon.js";
import type { Daemon } from "../../src/daemon/daemon.js";
import { silentLogger } from "../../src/logger.js";
import type { Plan } from "../../src/plan/plan.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { eventually } from "./eventually.js";
import { gitRemote, pushFiles } from "./git-remote.js";
import { call, testCredentials } from "./sandbox.js";
import { tempRepo } from "./temp-repo.js";

const syncToken = "side-by-side-sync-token";

export interface EnvironmentSpec {
  readonly name: string;
  readonly gateway: SandboxHandle;
  /** This environment's `${var:}` values. */
  readonly values?: Record<string, string | number>;
  /** targets.gateway.rateLimit, as YAML flow (`{ requestsPerSecond: 10 }`). */
  readonly rateLimit?: string;
}

export interface SideBySide {
  readonly daemon: Daemon;
  /** Every run of every environment, as it finished, with its plan. */
  readonly runs: Array<{ readonly report: RunReport; readonly plan: Plan | undefined }>;
  /** Commits `files` and pushes them to main; resolves to the commit. */
  push(files: Record<string, string>, message: string): Promise<string>;
  /** POST /sync: every environment runs the newest commit; with a name, POST /environments/NAME/sync: that one. */
  sync(environment?: string): Promise<void>;
  /** Waits until every named environment's last run is of `commit`. */
  ranCommit(commit: string, names: readonly string[], ms?: number): Promise<void>;
  stop(): Promise<void>;
}

const operatorFile = (origin: string, environments: readonly EnvironmentSpec[], concurrent: number): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: ${JSON.stringify(origin)}, branch: main, subdirectory: config, cacheDir: ./cache } }
state: { backend: sqlite, path: ./state.db }
limits: { concurrentEnvironments: ${concurrent} }
environments:
${environments
  .map(
    (e) => `  ${e.name}:
    targets: { gateway: { url: ${e.gateway.urls.gateway}, credentialEnv: GW_KEY${e.rateLimit === undefined ? "" : `, rateLimit: ${e.rateLimit}`} } }
    values: ${JSON.stringify(e.values ?? {})}`,
  )
  .join("\n")}
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN }
`;

/** Starts the daemon on `repository` (its first commit) once every environment ran it. */
export async function sideBySide(environments: readonly EnvironmentSpec[], concurrent: number, repository: Record<string, string>): Promise<SideBySide> {
  const dir = await tempRepo();
  const work = gitRemote(dir);
  const push = (files: Record<string, string>, message: string): Promise<string> => pushFiles(work, files, message);
  const first = await push(repository, "initial");
  const file = path.join(dir, "operator", "gatesync.yaml");
  await mkdir(path.dirname(file));
  await writeFile(file, operatorFile(path.join(dir, "origin.git"), environments, concurrent));
  const runs: SideBySide["runs"] = [];
  const daemon = await startDaemon({
    config: await loadConfig(file),
    env: { GW_KEY: testCredentials.gatewayKey, SYNC_TOKEN: syncToken },
    logger: silentLogger(),
    listen: "127.0.0.1:0",
    watchConfig: false,
    onRun: (report, plan) => runs.push({ report, plan }),
  });
  const ranCommit = async (commit: string, names: readonly string[], ms = 60_000): Promise<void> => {
    for (const name of names) {
      await eventually(
        () => daemon.environments.get(name)?.lastRun,
        (r) => r?.commit === commit,
        ms,
        () => `${name}: ${JSON.stringify(daemon.environments.get(name)?.lastRun)}`,
      );
    }
  };
  await ranCommit(
    first,
    environments.map((e) => e.name),
  );
  return {
    daemon,
    runs,
    push,
    sync: async (environment) => {
      const at = environment === undefined ? "/sync" : `/environments/${environment}/sync`;
      const answer = await call(`${daemon.url}${at}`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } });
      expect(answer.status).toBe(202);
    },
    ranCommit,
    stop: async () => daemon.stop(),
  };
}

/** The most runs that were under way at one moment (each report's start to its end). */
export function mostAtOnce(reports: readonly RunReport[]): number {
  const edges = reports.flatMap((r) => [
    { at: Date.parse(r.startedAt), step: 1 },
    { at: Date.parse(r.finishedAt), step: -1 },
  ]);
  // an end and a start at the same millisecond: the end first (the place was handed on)
  edges.sort((a, b) => a.at - b.at || a.step - b.step);
  let now = 0;
  let most = 0;
  for (const e of edges) most = Math.max(most, (now += e.step));
  return most;
}

/** `count` org keys, one file each, with `rate`; each key's id starts with the environment's `${var:prefix}`. */
export function orgKeys(count: number, rate: number): Record<string, string> {
  const files: Record<string, string> = {};
  for (let i = 0; i < count; i++) {
    files[`config/key-${i}.yaml`] = `apiVersion: gatesync.dev/v1
kind: OrgKey
metadata:
  name: key-${i}
spec:
  keyId: \${var:prefix}-key-${i}
  rate: ${rate}
`;
  }
  return files;
}
