/**
 * The sections of gatesync.yaml that an environment may set as well as the top level (targets,
 * schedule, secrets, state): their types, and each read from its section of a document that passed
 * the schema. config.ts reads the top level's, environment-section.ts each environment's.
 */
import { ConfigError, ErrorCode } from "../errors.js";
import { leaseSetting } from "./lease-section.js";
import type { LeaseConfig } from "./lease-section.js";
import { poolSetting } from "./pool-section.js";
import type { PoolConfig } from "./pool-section.js";
import { managementInterfaces } from "../contract/interfaces.js";
import type { InterfaceName } from "../contract/interfaces.js";
import { parseDuration } from "./duration.js";

export interface RateLimitConfig {
  readonly concurrency: number;
  readonly requestsPerSecond: number;
}

/** What every target has: where it answers, which variable holds its credential, how that is written, how fast to go. */
export interface Target {
  readonly url: string;
  /**
   * The environment variable holding the credential: `targets.<name>.<credentialEnvKey>` in
   * gatesync.yaml (`credentialEnv`, the dashboard's `tokenEnv`; see contract/interfaces.ts).
   */
  readonly credentialEnv: string;
  /** Written before the credential in its header; the interface's `defaultAuthScheme` when not given. */
  readonly authScheme: string;
  readonly rateLimit: RateLimitConfig;
}

/** The gateway's target: batch calls go through a loopback API of its own. */
export interface GatewayTarget extends Target {
  /** `apiId`: the loopback API's id, when the operator gives it (resources addressing it are refused). */
  readonly batch?: { readonly listenPath: string; readonly apiId?: string; readonly keyEnv: string; readonly maxSize: number };
}

/** The portal's target: which identity providers register applications by type. */
export interface PortalTarget extends Target {
  readonly appTypeProviders: readonly number[];
}

/** One target per interface the config names; the gateway and the portal carry settings of their own. */
export type TargetsConfig = { readonly [I in InterfaceName]?: Target } & { readonly gateway?: GatewayTarget; readonly portal?: PortalTarget };

export type StateConfig =
  | { readonly backend: "sqlite"; readonly path: string; readonly lockStaleMs?: number }
  | { readonly backend: "postgres"; readonly urlEnv: string; readonly schema: string; readonly lease?: LeaseConfig; readonly pool?: PoolConfig };

/** How often a daemon runs: its interval, the jitter on it, and how often it re-asserts what it applied. */
export interface ScheduleConfig {
  readonly intervalMs: number;
  readonly jitter: number;
  readonly reassertIntervalMs: number | undefined;
}

/** A reference read from the daemon's own disk instead of the commit (secrets.fromDaemonDisk). */
export type DaemonDiskReference = "file" | "sops";

/** Where `${file:}` resolves, and which variables `${env:}` may read (nothing else resolves). */
export interface SecretsConfig {
  /** Resolved from this file's directory: the daemon's disk (source/secret-roots.ts puts it in the commit's checkout for a git source). */
  readonly fileRoot: string;
  /** `fileRoot` as written ("." when absent): a git source resolves it in the repository. */
  readonly fileRootWritten?: string;
  /** With a git source, the references read from the daemon's disk (default `file`). */
  readonly fromDaemonDisk?: readonly DaemonDiskReference[];
  readonly env: readonly string[];
  readonly envPrefix?: string;
  /** Where `${sops:}` takes its age identities (secrets.sopsAgeKeyEnv, secrets.sopsAgeKeyFile): when either is set, only they. */
  readonly sopsAgeKeyEnv?: string;
  readonly sopsAgeKeyFile?: string;
}

const defaultRate: RateLimitConfig = { concurrency: 8, requestsPerSecond: 50 };

type Raw = Record<string, unknown>;

/** A setting given as a string, under its key (mapped, e.g. resolved as a path); nothing when absent. */
export function optional(key: string, value: unknown, map: (v: string) => string = (v) => v): Record<string, string> {
  return typeof value === "string" ? { [key]: map(value) } : {};
}

function rate(raw: unknown): RateLimitConfig {
  return { ...defaultRate, ...(raw as Partial<RateLimitConfig> | undefined) };
}

/** What only one interface's target carries, read from its section. */
const targetSettings: { readonly [I in InterfaceName]?: (raw: Raw) => Omit<NonNullable<TargetsConfig[I]>, keyof Target> } = {
  gateway: (g) => {
    const b = g.batch as Raw | undefined;
    return b === undefined
      ? {}
      : {
          batch: {
            listenPath: String(b.listenPath),
            ...optional("apiId", b.apiId),
            keyEnv: String(b.keyEnv),
            maxSize: typeof b.maxSize === "number" ? b.maxSize : 50,
          },
        };
  },
  portal: (p) => ({ appTypeProviders: (p.appTypeProviders as number[] | undefined) ?? [] }),
};

/** The targets section: each interface gatesync writes to, with its credentials and rate. */
export function targetsConfig(t: Raw): TargetsConfig {
  const targets: Partial<Record<InterfaceName, Target>> = {};
  for (const iface of managementInterfaces) {
    const raw = t[iface.name] as Raw | undefined;
    if (raw === undefined) continue;
    targets[iface.name] = {
      url: String(raw.url),
      credentialEnv: String(raw[iface.credentialEnvKey]),
      authScheme: typeof raw.authScheme === "string" ? raw.authScheme : iface.defaultAuthScheme,
      rateLimit: rate(raw.rateLimit),
      ...targetSettings[iface.name]?.(raw),
    };
  }
  // each target of an interface with settings of its own got them from `targetSettings` above
  return targets as TargetsConfig;
}

/** Each target's credential variable with the setting of gatesync.yaml that names it (`targets.dashboard.tokenEnv`). */
export function targetCredentialVariables(
  targets: TargetsConfig,
): Array<{ readonly interface: InterfaceName; readonly name: string; readonly setting: string }> {
  return managementInterfaces.flatMap((iface) => {
    const target = targets[iface.name];
    return target === undefined ? [] : [{ interface: iface.name, name: target.credentialEnv, setting: `targets.${iface.name}.${iface.credentialEnvKey}` }];
  });
}

/** The schedule section (the top level's, or an environment's). */
export function scheduleConfig(sc: Raw): ScheduleConfig {
  return {
    intervalMs: parseDuration(typeof sc.interval === "string" ? sc.interval : "1m"),
    jitter: typeof sc.jitter === "number" ? sc.jitter : 0.1,
    reassertIntervalMs: typeof sc.reassertInterval === "string" ? parseDuration(sc.reassertInterval) : undefined,
  };
}

/** The secret scope (the top level's, or an environment's): paths relative to the config. */
export function secretsConfig(secrets: Raw, resolve: (p: string) => string): SecretsConfig {
  return {
    fileRoot: resolve(typeof secrets.fileRoot === "string" ? secrets.fileRoot : "."),
    fileRootWritten: typeof secrets.fileRoot === "string" ? secrets.fileRoot : ".",
    ...(Array.isArray(secrets.fromDaemonDisk) ? { fromDaemonDisk: secrets.fromDaemonDisk as DaemonDiskReference[] } : {}),
    env: Array.isArray(secrets.env) ? secrets.env.map(String) : [],
    ...optional("envPrefix", secrets.envPrefix),
    ...optional("sopsAgeKeyEnv", secrets.sopsAgeKeyEnv),
    ...(typeof secrets.sopsAgeKeyFile === "string" ? { sopsAgeKeyFile: resolve(secrets.sopsAgeKeyFile) } : {}),
  };
}

/** The state section; the retired `backend: file` is refused with the command that moves it. */
export function stateConfig(st: Record<string, unknown>, resolve: (p: string) => string, file: string | undefined): StateConfig {
  const schema = typeof st.schema === "string" ? st.schema : "gatesync";
  if (st.backend === "postgres") return { backend: "postgres", urlEnv: String(st.urlEnv), schema, ...leaseSetting(st.lease), ...poolSetting(st.pool) };
  if (st.backend === "file") {
    const old = resolve(typeof st.path === "string" ? st.path : ".gatesync/state.json");
    const target = old.endsWith(".json") ? `${old.slice(0, -5)}.db` : `${old}.db`;
    throw new ConfigError(ErrorCode.CONFIG_INVALID, "`state: { backend: file }` is retired: the state now lives in SQLite", {
      hint: `move it with \`gatesync state migrate --from file:${old} --to sqlite:${target}\`, then set \`state: { backend: sqlite, path: ${target} }\``,
      ...(file === undefined ? {} : { location: { file, path: "state.backend" } }),
    });
  }
  return {
    backend: "sqlite",
    path: resolve(typeof st.path === "string" ? st.path : ".gatesync/state.db"),
    ...(typeof st.lockStaleAfter === "string" ? { lockStaleMs: parseDuration(st.lockStaleAfter) } : {}),
  };
}

/** Where the resource files come from (`source:`, top level or an environment's). */
export type SourceConfig =
  | { readonly type: "directory"; readonly directory: string; readonly watch: boolean }
  | {
      readonly type: "git";
      readonly url: string;
      readonly branch?: string;
      readonly tag?: string;
      readonly commit?: string;
      readonly subdirectory: string;
      readonly cacheDir: string;
      readonly tokenEnv?: string;
      readonly sshKeyFile?: string;
      /** The repository's settings file (team settings), relative to the repository's root: `gatesync.yaml` unless named. */
      readonly config?: string;
    };

/** The source section: a git repository or a directory; paths relative to the config. */
export function sourceConfig(src: Raw, resolve: (p: string) => string): SourceConfig {
  if (!("git" in src)) return { type: "directory", directory: resolve(String(src.directory)), watch: src.watch === true };
  const g = src.git as Raw;
  return {
    type: "git",
    // a local path written relative (./repo.git) is relative to the config, like every other path
    url: /^\.\.?\//.test(String(g.url)) ? resolve(String(g.url)) : String(g.url),
    ...optional("branch", g.branch),
    ...optional("tag", g.tag),
    ...optional("commit", g.commit),
    subdirectory: typeof g.subdirectory === "string" ? g.subdirectory : ".",
    cacheDir: resolve(typeof g.cacheDir === "string" ? g.cacheDir : ".gatesync/git"),
    ...optional("tokenEnv", g.tokenEnv),
    ...optional("sshKeyFile", g.sshKeyFile, resolve),
    ...optional("config", g.config),
  };
}
