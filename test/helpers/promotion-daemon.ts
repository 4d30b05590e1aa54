/**
 * A daemon of two environments over a real bare git repository, one sandbox each: staging follows
 * the branch, production is promoted from staging (`track: { promotedFrom: staging }`), with a
 * short soak in staging, the promotion token and the sync token. Tests push commits, sync, and
 * promote over HTTP (POST /environments/production/promote).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { loadConfig } from "../../src/config/config.js";
import { startDaemon } from "../../src/daemon/daemon.js";
import type { Daemon } from "../../src/daemon/daemon.js";
import { silentLogger } from "../../src/logger.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { spawnDaemon, stopDaemon } from "./daemon-process.js";
import { eventually } from "./eventually.js";
import type { DaemonProcess } from "./daemon-process.js";
import { runCli } from "./cli.js";
import type { CliResult } from "./cli.js";
import { gitRemote, pushFiles } from "./git-remote.js";
import { orgKey } from "./resources.js";
import { call, testCredentials, testSandbox } from "./sandbox.js";
import type { Answer } from "./sandbox.js";
import { tempRepo } from "./temp-repo.js";

export const promoteToken = "promotion-test-promote-token";
export const syncToken = "promotion-test-sync-token";
export const stateToken = "promotion-test-state-token";

export interface PromotionDaemon {
  readonly staging: SandboxHandle;
  readonly production: SandboxHandle;
  readonly daemon: Daemon;
  readonly dir: string;
  readonly operatorFile: string;
  /** The variables the daemon runs with. */
  readonly env: Readonly<Record<string, string>>;
  push(files: Record<string, string>, message: string): Promise<string>;
  sync(): Promise<void>;
  /** POST /environments/NAME/promote with `token` (default: the promotion token; null: none); a string body is sent as it is. */
  promote(body: object | string, token?: string | null, environment?: string): Promise<Answer>;
  stop(): Promise<void>;
}

/** Further settings of staging in the operator's file (YAML lines under `staging:`, indented by four spaces). */
export interface PromotionDaemonOptions {
  readonly stagingSettings?: string;
}

const operatorSettings = (
  origin: string,
  staging: SandboxHandle,
  production: SandboxHandle,
  promotion: string,
  soak = "1s",
  extra = "",
): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: ${JSON.stringify(origin)}, branch: main, subdirectory: config, cacheDir: ./cache } }
state: { backend: sqlite, path: ./state.db }
environments:
  staging:
    targets: { gateway: { url: ${staging.urls.gateway}, credentialEnv: GW_KEY } }
    soak: ${soak}
${extra}  production:
    targets: { gateway: { url: ${production.urls.gateway}, credentialEnv: GW_KEY } }
    track: { promotedFrom: staging }
    promotion: ${promotion}
schedule: { interval: 1h }
server: { listen: "127.0.0.1:0", syncTokenEnv: SYNC_TOKEN, stateTokenEnv: STATE_TOKEN, promoteTokenEnv: PROMOTE_TOKEN }
`;

export async function promotionDaemon(
  repository: Record<string, string>,
  promotion: "auto" | "manual" = "manual",
  options: PromotionDaemonOptions = {},
): Promise<PromotionDaemon> {
  const staging = await testSandbox();
  const production = await testSandbox();
  const dir = await tempRepo();
  const work = gitRemote(dir);
  const origin = path.join(dir, "origin.git");
  const push = (files: Record<string, string>, message: string): Promise<string> => pushFiles(work, files, message);
  await push(repository, "initial");
  const operatorFile = path.join(dir, "operator", "gatesync.yaml");
  await mkdir(path.dirname(operatorFile));
  await writeFile(operatorFile, operatorSettings(origin, staging, production, promotion, "1s", options.stagingSettings));
  const env = { GW_KEY: testCredentials.gatewayKey, SYNC_TOKEN: syncToken, STATE_TOKEN: stateToken, PROMOTE_TOKEN: promoteToken };
  const daemon = await startDaemon({ config: await loadConfig(operatorFile), env, logger: silentLogger(), listen: "127.0.0.1:0", watchConfig: false });
  const bearer = (token: string | null): Record<string, string> => (token === null ? {} : { authorization: `Bearer ${token}` });
  return {
    staging,
    production,
    daemon,
    dir,
    operatorFile,
    env,
    push,
    sync: async () => {
      const answer = await call(`${daemon.url}/sync`, { method: "POST", headers: bearer(syncToken) });
      if (answer.status !== 202) throw new Error(`sync answered ${answer.status}`);
    },
    promote: (body, token = promoteToken, environment = "production") =>
      call(`${daemon.url}/environments/${environment}/promote`, { method: "POST", headers: { ...bearer(token), "content-type": "application/json" }, body }),
    stop: async () => {
      await daemon.stop();
      await staging.stop();
      await production.stop();
    },
  };
}

/** The org key `acme` at `rate`, as a commit's files. */
export const acmeKey = (rate: number): Record<string, string> => ({ "config/keys.yaml": orgKey({ name: "acme", keyId: "org-acme", rate }) });

/** acme's rate on that environment's gateway (undefined: not created there). */
export const acmeRate = (d: Pick<PromotionDaemon, "staging" | "production">, where: "staging" | "production"): number | undefined =>
  d[where].inspect.store.orgKeys.get("org-acme")?.session.rate as number | undefined;

/** Waits until acme's rate on that environment's gateway is `rate` (at most `ms`). */
export async function untilAcmeRate(
  d: Pick<PromotionDaemon, "staging" | "production">,
  where: "staging" | "production",
  rate: number,
  ms?: number,
): Promise<void> {
  await eventually(
    () => acmeRate(d, where),
    (r) => r === rate,
    ms,
  );
}

/** Waits until production may take staging's newest revision (staging verified it). */
export async function candidateReady(d: Pick<PromotionDaemon, "promote">): Promise<void> {
  await eventually(
    () => d.promote({ dryRun: true }),
    (a) => a.status === 200,
  );
}

/**
 * Production on a second revision (acme's rate raised, globex created) promoted after the first,
 * both verified there: a rollback has a step to go back, and a create it cannot undo.
 */
export async function promotedTwice(d: Pick<PromotionDaemon, "push" | "sync" | "promote">, files: Record<string, string>): Promise<void> {
  await d.push(files, "raise acme's rate, add globex");
  await d.sync();
  await eventually(
    () => d.promote({ dryRun: true }),
    (a) => a.status === 200 && (a.body as { changes: number }).changes > 0,
  );
  const promoted = await d.promote({});
  if (promoted.status !== 202) throw new Error(`promotion answered ${promoted.status}: ${promoted.text}`);
  await eventually(
    () => d.promote({ rollback: { steps: 1 }, dryRun: true }),
    (a) => a.status === 200,
  );
}

/** The tokens of every purpose, each its own value, as `spawnedPromotionDaemon` runs with them. */
export const everyToken = {
  pages: "promotion-test-pages-token",
  state: stateToken,
  sync: syncToken,
  webhook: "promotion-test-webhook-secret",
  promote: promoteToken,
};

/** The request options of a reader of the status pages and routes (the pages' token), as a call or fetch takes them. */
export const pagesReader = { headers: { authorization: `Bearer ${everyToken.pages}` } };

/** The variables naming those tokens, as the operator's file of `spawnedPromotionDaemon` reads them. */
export const everyTokenEnv: Readonly<Record<string, string>> = {
  SYNC_TOKEN: everyToken.sync,
  STATE_TOKEN: everyToken.state,
  PROMOTE_TOKEN: everyToken.promote,
  PAGES_TOKEN: everyToken.pages,
  HOOK_SECRET: everyToken.webhook,
};

export interface SpawnedPromotionDaemon extends Pick<
  PromotionDaemon,
  "staging" | "production" | "dir" | "operatorFile" | "push" | "sync" | "promote" | "stop"
> {
  readonly work: string;
  readonly process: DaemonProcess;
  readonly url: string;
}

/**
 * The same two environments served by `gatesync run` as a child process, with every token of
 * `everyToken` set (`server.pagesTokenEnv` and `server.webhookSecretEnv` too); `env` overrides
 * the variables (a token shared by two purposes), and the config file is watched (a reload).
 */
export async function spawnedPromotionDaemon(
  repository: Record<string, string>,
  env: Record<string, string> = {},
  soak = "1s",
  promotion: "auto" | "manual" = "manual",
): Promise<SpawnedPromotionDaemon> {
  const staging = await testSandbox();
  const production = await testSandbox();
  const dir = await tempRepo();
  const work = gitRemote(dir);
  const push = (files: Record<string, string>, message: string): Promise<string> => pushFiles(work, files, message);
  await push(repository, "initial");
  const operatorFile = path.join(dir, "operator", "gatesync.yaml");
  await mkdir(path.dirname(operatorFile));
  const server = "promoteTokenEnv: PROMOTE_TOKEN, pagesTokenEnv: PAGES_TOKEN, webhookSecretEnv: HOOK_SECRET";
  await writeFile(
    operatorFile,
    operatorSettings(path.join(dir, "origin.git"), staging, production, promotion, soak).replace("promoteTokenEnv: PROMOTE_TOKEN", server),
  );
  const variables = { ...everyTokenEnv, ...env };
  const stopSandboxes = async (): Promise<void> => {
    await staging.stop();
    await production.stop();
  };
  const process = await spawnDaemon(operatorFile, path.dirname(operatorFile), variables).catch(async (err: unknown) => {
    await stopSandboxes();
    throw err;
  });
  const bearer = (token: string | null): Record<string, string> => (token === null ? {} : { authorization: `Bearer ${token}` });
  return {
    staging,
    production,
    dir,
    work,
    operatorFile,
    process,
    url: process.url,
    push,
    sync: async () => {
      const answer = await call(`${process.url}/sync`, { method: "POST", headers: bearer(everyToken.sync) });
      if (answer.status !== 202) throw new Error(`sync answered ${answer.status}`);
    },
    promote: (body, token = everyToken.promote, environment = "production") =>
      call(`${process.url}/environments/${environment}/promote`, { method: "POST", headers: { ...bearer(token), "content-type": "application/json" }, body }),
    stop: async () => {
      await stopDaemon(process);
      await stopSandboxes();
    },
  };
}

/** The same two environments run by a real `gatesync run` process; the CLI (in this process) asks it, as an operator's terminal does. */
export interface PromotionProcess {
  readonly staging: SandboxHandle;
  readonly production: SandboxHandle;
  readonly daemon: DaemonProcess;
  readonly work: string;
  readonly operatorFile: string;
  push(files: Record<string, string>, message: string): Promise<string>;
  sync(): Promise<void>;
  /** `gatesync ARGS` with the daemon's address and the promotion token set, and `-c` the daemon's file where the command takes it. */
  cli(args: readonly string[]): Promise<CliResult>;
  /** `gatesync ARGS` as given (a hint followed as printed: its own `-c`), with the same variables. */
  follow(args: readonly string[]): Promise<CliResult>;
  stop(): Promise<void>;
}

export async function promotionProcess(repository: Record<string, string>, soak: string, promotion: "auto" | "manual" = "manual"): Promise<PromotionProcess> {
  const d = await spawnedPromotionDaemon(repository, {}, soak, promotion);
  const cliEnv = { GW_KEY: testCredentials.gatewayKey, ...everyTokenEnv, GATESYNC_DAEMON_URL: d.url };
  return {
    staging: d.staging,
    production: d.production,
    daemon: d.process,
    work: d.work,
    operatorFile: d.operatorFile,
    push: d.push,
    sync: d.sync,
    cli: (args) => runCli([...args, "-c", d.operatorFile], cliEnv),
    follow: (args) => runCli([...args], cliEnv),
    stop: d.stop,
  };
}
