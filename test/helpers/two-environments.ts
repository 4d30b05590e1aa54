/**
 * A daemon of two environments, staging and production (one sandbox each), following a real
 * bare git repository: the team's repository (its gatesync.yaml holds the team's settings), and
 * the operator's gatesync.yaml outside it. Tests push commits and ask the daemon to sync.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { expect } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { startDaemon } from "../../src/daemon/daemon.js";
import type { Daemon } from "../../src/daemon/daemon.js";
import type { Logger } from "../../src/logger.js";
import { silentLogger } from "../../src/logger.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { eventually } from "./eventually.js";
import { gitRemote, pushFiles } from "./git-remote.js";
import { call, testCredentials, testSandbox } from "./sandbox.js";
import { tempRepo } from "./temp-repo.js";

export const syncToken = "two-environments-sync-token";
export const stateToken = "two-environments-state-token";

export interface TwoEnvironments {
  readonly staging: SandboxHandle;
  readonly production: SandboxHandle;
  /** The bare repository (what the daemon and a merge-request clone fetch). */
  readonly origin: string;
  /** The team's checkout, where `push` commits. */
  readonly work: string;
  /** The daemon's own gatesync.yaml (the operator's). */
  readonly operatorFile: string;
  readonly daemon: Daemon;
  /** Commits `files` in the team's checkout and pushes them to main; resolves to the commit. */
  push(files: Record<string, string>, message: string): Promise<string>;
  /** Asks the daemon to sync, and waits until both environments ran `commit`. */
  syncTo(commit: string): Promise<void>;
  stop(): Promise<void>;
}

/**
 * The operator's gatesync.yaml: where each environment applies, with which credential, its
 * state, the orphan policy — and, left over from before the two owners, a staging value the
 * repository's file replaces.
 */
const operatorSettings = (origin: string, staging: SandboxHandle, production: SandboxHandle): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: ${JSON.stringify(origin)}, branch: main, subdirectory: config, cacheDir: ./cache } }
state: { backend: sqlite, path: ./state.db }
orphans: report
environments:
  staging:
    targets: { gateway: { url: ${staging.urls.gateway}, credentialEnv: GW_KEY } }
    values: { rate: 99 }
  production:
    targets: { gateway: { url: ${production.urls.gateway}, credentialEnv: GW_KEY } }
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN, stateTokenEnv: STATE_TOKEN }
`;

export async function twoEnvironments(repository: Record<string, string>, logger: Logger = silentLogger()): Promise<TwoEnvironments> {
  const staging = await testSandbox();
  const production = await testSandbox();
  const dir = await tempRepo();
  const work = gitRemote(dir);
  const origin = path.join(dir, "origin.git");
  const push = (files: Record<string, string>, message: string): Promise<string> => pushFiles(work, files, message);
  await push(repository, "initial");
  const operatorFile = path.join(dir, "operator", "gatesync.yaml");
  await mkdir(path.dirname(operatorFile));
  await writeFile(operatorFile, operatorSettings(origin, staging, production));
  const daemon = await startDaemon({
    config: await loadConfig(operatorFile),
    env: { GW_KEY: testCredentials.gatewayKey, SYNC_TOKEN: syncToken, STATE_TOKEN: stateToken },
    logger,
    listen: "127.0.0.1:0",
    watchConfig: false,
  });
  const syncTo = async (commit: string): Promise<void> => {
    const answer = await call(`${daemon.url}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } });
    expect(answer.status).toBe(202);
    for (const name of ["staging", "production"]) {
      await eventually(
        () => daemon.environments.get(name)?.lastRun,
        (r) => r?.commit === commit,
      );
    }
  };
  return {
    staging,
    production,
    origin,
    work,
    operatorFile,
    daemon,
    push,
    syncTo,
    stop: async () => {
      await daemon.stop();
      await staging.stop();
      await production.stop();
    },
  };
}
