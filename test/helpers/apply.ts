/**
 * An apply against a real sandbox over HTTP: a temp repository with gatesync.yaml pointing at
 * the sandbox, the credentials and secrets in an env map, and helpers to plan and apply.
 */
import { randomBytes } from "node:crypto";
import { cp, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { Agent } from "undici";
import type { ApplyRunResult } from "../../src/run/run-apply.js";
import { runApply } from "../../src/run/run-apply.js";
import type { GatesyncConfig } from "../../src/config/config.js";
import { loadConfig } from "../../src/config/config.js";
import { silentLogger } from "../../src/logger.js";
import type { Plan } from "../../src/plan/plan.js";
import { runPlan } from "../../src/run/run-plan.js";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import type { Fixtures } from "../../src/sandbox/fixtures.js";
import type { SandboxHandle, SandboxOptions } from "../../src/sandbox/sandbox.js";
import { startSandbox } from "../../src/sandbox/sandbox.js";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import { clearedAddresses, exampleFixtures, testCredentials } from "./sandbox.js";
import { misbehavingProxy } from "./misbehaving-proxy.js";
import type { MisbehavingProxy, Rule } from "./misbehaving-proxy.js";
import { projectRoot, tempRepo } from "./temp-repo.js";

export interface Harness {
  readonly dir: string;
  readonly sandbox: SandboxHandle;
  readonly env: Record<string, string>;
  readonly state: SqliteStateBackend;
  config(): Promise<GatesyncConfig>;
  plan(): Promise<Plan>;
  apply(extra?: Partial<Parameters<typeof runApply>[0]>): Promise<Extract<ApplyRunResult, { summary: unknown }>>;
  stop(): Promise<void>;
}

export interface HarnessOptions {
  /** Files of the resource directory; default: a copy of examples/config. */
  readonly files?: Record<string, string>;
  readonly batch?: boolean;
  readonly fixtures?: Partial<Fixtures>;
  readonly sandbox?: Partial<SandboxOptions>;
  /** Extra YAML appended to gatesync.yaml (retries, rate limits …). */
  readonly configExtra?: string;
  readonly rate?: string;
  /** Where the SQLite state lives (default: state/state.db in the temp repository). */
  readonly statePath?: string;
  /**
   * The sandbox takes random credentials of its own instead of the shared test ones: no other
   * process can change it — say a daemon that a killed test run left behind, still reconciling
   * the examples against a port that this sandbox was given later. For suites that count objects.
   */
  readonly ownCredentials?: boolean;
}

export const exampleSecrets = {
  PETSTORE_MOBILE_CLIENT_SECRET: "petstore-mobile-secret-value-1",
  CRM_HOOK_TOKEN: "crm-hook-token-value-2",
  CHAT_WEBHOOK_TOKEN: "chat-webhook-token-value-3",
};

/** The variables the harness's gatesync.yaml names for a sandbox's credentials. */
export function credentialEnv(c: typeof testCredentials): Record<string, string> {
  return { GW_KEY: c.gatewayKey, PORTAL_KEY: c.portalKey, DASH_TOKEN: c.dashboardToken, LLM_KEY: c.llmKey };
}

/** The variables a config pointing at a test sandbox names for its credentials, and the examples' secrets. */
export const sandboxEnv: Readonly<Record<string, string>> = {
  ...credentialEnv(testCredentials),
  BATCH_KEY: "sandbox-loopback-key",
  ...exampleSecrets,
};

function ownCredentials(): typeof testCredentials {
  const random = (prefix: string): string => `${prefix}-${randomBytes(12).toString("hex")}`;
  return { gatewayKey: random("gw"), portalKey: random("portal"), dashboardToken: random("dash"), llmKey: random("llm") };
}

export async function harness(opts: HarnessOptions = {}): Promise<Harness> {
  const credentials = opts.ownCredentials === true ? ownCredentials() : testCredentials;
  const sandbox = await clearedAddresses(await startSandbox({ credentials, fixtures: await exampleFixtures(opts.fixtures), ...opts.sandbox }));
  const dir = await tempRepo(Object.fromEntries(Object.entries(opts.files ?? {}).map(([k, v]) => [`config/${k}`, v])));
  if (opts.files === undefined) await cp(path.join(projectRoot, "examples/config"), path.join(dir, "config"), { recursive: true });
  await cp(path.join(projectRoot, "examples/secrets"), path.join(dir, "secrets"), { recursive: true });
  const rate = opts.rate ?? "{ concurrency: 8, requestsPerSecond: 1000 }";
  await writeFile(
    path.join(dir, "gatesync.yaml"),
    `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway:
    url: ${sandbox.urls.gateway}
    credentialEnv: GW_KEY
    rateLimit: ${rate}
${opts.batch === false ? "" : "    batch: { listenPath: /gw-batch/, apiId: gw-loopback, keyEnv: BATCH_KEY, maxSize: 50 }\n"}  portal: { url: ${sandbox.urls.portal}, credentialEnv: PORTAL_KEY, appTypeProviders: [3], rateLimit: ${rate} }
  dashboard: { url: ${sandbox.urls.dashboard}, tokenEnv: DASH_TOKEN, rateLimit: ${rate} }
  llm: { url: ${sandbox.urls.llm}, credentialEnv: LLM_KEY, rateLimit: ${rate} }
state: { backend: sqlite, path: ${opts.statePath ?? "./state/state.db"} }
secrets: { fileRoot: ./secrets, env: [PETSTORE_MOBILE_CLIENT_SECRET, CRM_HOOK_TOKEN, CHAT_WEBHOOK_TOKEN, LLM_PROMPT_SECRET, BASIC_PASSWORD] }
retries: { max: 4, baseDelayMs: 20, maxDelayMs: 200, timeoutMs: 5000 }
${opts.configExtra ?? ""}`,
  );
  const env: Record<string, string> = { ...sandboxEnv, ...credentialEnv(credentials) };
  const state = new SqliteStateBackend(path.resolve(dir, opts.statePath ?? "state/state.db"));
  const validator = new RepositoryValidator();
  const dispatcher = new Agent({ keepAliveTimeout: 10_000 });
  const config = (): Promise<GatesyncConfig> => loadConfig(path.join(dir, "gatesync.yaml"));
  return {
    dir,
    sandbox,
    env,
    state,
    config,
    plan: async () => (await runPlan({ config: await config(), root: path.join(dir, "config"), validator, state, env })).plan,
    apply: async (extra = {}) => {
      const result = await runApply({
        config: await config(),
        root: path.join(dir, "config"),
        validator,
        state,
        env,
        logger: silentLogger(),
        dispatcher,
        ...extra,
      });
      if (!("summary" in result)) throw new Error("apply declined");
      return result;
    },
    stop: async () => {
      await sandbox.stop();
      await dispatcher.close();
      await state.close();
    },
  };
}

/** A harness whose `iface` target goes through a misbehaving proxy; `settings` edits gatesync.yaml. */
export async function throughProxy(
  iface: "gateway" | "portal",
  rules: Rule[],
  opts: HarnessOptions,
  settings: (yaml: string) => string = (y) => y,
): Promise<{ h: Harness; proxy: MisbehavingProxy }> {
  const hh = await harness(opts);
  const p = await misbehavingProxy(hh.sandbox.urls.base, rules);
  const cfg = path.join(hh.dir, "gatesync.yaml");
  let yaml = await readFile(cfg, "utf8");
  yaml =
    iface === "portal" ? yaml.replace(`url: ${hh.sandbox.urls.portal}`, `url: ${p.url}/portal/api`) : yaml.replace(/(gateway:\n\s+url: )\S+/, `$1${p.url}`);
  await writeFile(cfg, settings(yaml));
  return { h: hh, proxy: p };
}
