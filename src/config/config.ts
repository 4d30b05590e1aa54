/**
 * gatesync.yaml: where resources come from, where they go, how fast, where state lives.
 * Credentials are referenced by environment variable name, never written in the file.
 */
import path from "node:path";
import { SchemaRegistry } from "../validate/schema/schema-registry.js";
import { checkConfigText, readConfigFile } from "./config-text.js";
import { parseDuration } from "./duration.js";
import { historyFromDocument } from "./history-section.js";
import type { PromotionSettings } from "./promotion-section.js";
import type { SyncWindow } from "./windows-section.js";
import { notificationsFromDocument } from "./notifications.js";
import { rulesFromDocument } from "../rules/rules-config.js";
import type { RulesConfig } from "../rules/rules-config.js";
import type { PreparedRules } from "../rules/prepare-rules.js";
import type { NotificationsConfig } from "./notifications.js";
import { optional, scheduleConfig, secretsConfig, sourceConfig, stateConfig, targetsConfig } from "./config-sections.js";
import type { ScheduleConfig, SecretsConfig, StateConfig, TargetsConfig } from "./config-sections.js";
import { environmentsFromDocument, valuesFromDocument } from "./environment-section.js";
import type { EnvironmentDefinition, EnvironmentValue, PatchSource } from "./environment-section.js";
import { telemetryFromDocument } from "./telemetry-section.js";
import type { TrackSetting } from "./track-section.js";
import type { TelemetryConfig } from "./telemetry-section.js";

import type { SourceConfig } from "./config-sections.js";

export type { SourceConfig } from "./config-sections.js";

export interface GatesyncConfig {
  /** The file it was read from (absolute), or undefined for the built-in default. */
  readonly file: string | undefined;
  /** Relative paths in the file resolve against this directory. */
  readonly baseDir: string;
  readonly source: SourceConfig;
  readonly targets: TargetsConfig;
  readonly retries: {
    readonly max: number;
    readonly baseDelayMs: number;
    readonly maxDelayMs: number;
    /** Deadline of one call: connect, headers and the whole answer. */
    readonly timeoutMs: number;
    /** A longer Retry-After fails the interface's remaining calls as throttled for this run. */
    readonly maxRetryAfterMs: number;
  };
  readonly state: StateConfig;
  readonly schedule: ScheduleConfig;
  /** How much of each environment's history its state keeps (`history:`). */
  readonly history: ReturnType<typeof historyFromDocument>;
  readonly orphans: "report" | "deactivate";
  /** `owner:` (docs/user/teams.md): on an environment's effective config, its own or the top level's; read through `claimantOf`. */
  readonly owner?: string;
  /** The guard against mass deactivation (docs/user/renames.md). */
  readonly deactivationGuard: DeactivationGuard;
  readonly server: {
    readonly listen: string;
    readonly webhookSecretEnv?: string;
    readonly syncTokenEnv?: string;
    readonly stateTokenEnv?: string;
    readonly pagesTokenEnv?: string;
    /** The variable holding the token of POST /environments/NAME/promote (docs/user/promotion.md). */
    readonly promoteTokenEnv?: string;
  };
  /** Where `${file:}` resolves, and which variables `${env:}` may read (nothing else resolves). */
  readonly secrets: SecretsConfig;
  readonly limits: {
    readonly maxFileBytes: number;
    readonly maxFiles: number;
    readonly maxDepth: number;
    readonly maxResponseBytes: number;
    readonly maxDocumentsPerFile: number;
    readonly maxDocuments: number;
    readonly concurrentEnvironments?: number; // environments of one daemon running at once; default: the machine's cores
  };
  /** Label selector: this instance owns (plans, applies, reports as orphans) only the matching resources. */
  readonly selector?: string;
  /** Receivers of run events and commit status (the daemon only). */
  readonly notifications?: NotificationsConfig;
  /** Traces (docs/user/telemetry.md); the OTEL_* variables win over it. */
  readonly telemetry?: TelemetryConfig;
  /** Governance rulesets (Spectral), by target: see docs/user/rules.md. */
  readonly rules?: RulesConfig;
  /** The rulesets, bundled (withRulesets): set by the daemon, which keeps the last good ones; a command without them bundles the files. */
  readonly rulesets?: PreparedRules;
  /**
   * `environments:` in the file's order (docs/user/environments.md); absent: one implicit
   * environment, this config. `environmentsOf` (environments.ts) gives each one's effective config.
   */
  readonly environments?: readonly EnvironmentDefinition[];
  /** `${var:NAME}` values: the top level's, or on an environment's effective config its own over them. */
  readonly values?: Readonly<Record<string, EnvironmentValue>>;
  /** On an environment's effective config: its overlay patches, in order. */
  readonly patches?: readonly PatchSource[];
  /** On an environment's effective config: what it applies (`track:`); absent: the top level's git ref. */
  readonly track?: TrackSetting;
  /** On an environment's effective config: how a revision moves here (`soak`, `promotion`). */
  readonly promotion?: PromotionSettings;
  /** On an environment's effective config: its sync windows (windows-section.ts). */
  readonly windows?: readonly SyncWindow[];
  /** On an environment's effective config (never on the implicit one's): the environment's name. */
  readonly environment?: string;
  /**
   * On an environment's effective config: every environment's of the config, this one's included
   * (one array all of them share: a fleet of N holds N references, not N²), so that the others'
   * credentials and state files stay out of this environment's secret scope (credentials.ts).
   */
  readonly fleet?: readonly GatesyncConfig[];
  /** The document as written (after the schema): what the daemon compares a repository's file with (settings-owners.ts). */
  readonly document?: Readonly<Record<string, unknown>>;
  /**
   * On a daemon run's config: the repository's settings file its team settings were read from
   * (values, patches and rules findings are located there); `file` stays the operator's.
   */
  readonly teamFile?: string;
}

type Raw = Record<string, unknown>;

/** The guard against mass deactivation (docs/user/renames.md; applied by the planner's deactivation-guard.ts). */
export interface DeactivationGuard {
  /** Largest share (0–1) of the deactivatable records one run may switch off; all of them never. */
  readonly maxShare: number;
  /** Lifted (the config's `allow`, or a one-shot command's --allow-mass-deactivation). */
  readonly allow: boolean;
  /** Lifted for plans of this commit (a prefix of at least 7 characters). */
  readonly allowCommit?: string;
}

export const defaultMaxShare = 0.5;

function deactivationGuard(raw: Raw | undefined): DeactivationGuard {
  return {
    maxShare: typeof raw?.maxShare === "number" ? raw.maxShare : defaultMaxShare,
    allow: raw?.allow === true,
    ...optional("allowCommit", raw?.allowCommit),
  };
}

/** Builds the typed config from a document that passed the schema. */
export function configFromDocument(doc: Raw, file: string | undefined, baseDir: string): GatesyncConfig {
  const resolve = (p: string): string => path.resolve(baseDir, p);
  const source = sourceConfig(doc.source as Raw, resolve);
  const targets = targetsConfig((doc.targets ?? {}) as Raw);
  const r = (doc.retries ?? {}) as Partial<GatesyncConfig["retries"]>;
  const state = stateConfig((doc.state ?? { backend: "sqlite" }) as Raw, resolve, file);
  const sv = (doc.server ?? {}) as Raw;
  const lim = (doc.limits ?? {}) as Raw;
  return {
    file,
    baseDir,
    source,
    targets,
    retries: {
      max: r.max ?? 4,
      baseDelayMs: r.baseDelayMs ?? 200,
      maxDelayMs: r.maxDelayMs ?? 10_000,
      timeoutMs: r.timeoutMs ?? 15_000,
      maxRetryAfterMs: r.maxRetryAfterMs ?? 300_000,
    },
    state,
    schedule: scheduleConfig((doc.schedule ?? {}) as Raw),
    history: historyFromDocument(doc.history),
    orphans: doc.orphans === "deactivate" ? "deactivate" : "report",
    ...(typeof doc.owner === "string" ? { owner: doc.owner } : {}),
    deactivationGuard: deactivationGuard(doc.deactivationGuard as Raw | undefined),
    server: {
      listen: typeof sv.listen === "string" ? sv.listen : "127.0.0.1:9464",
      ...(typeof sv.webhookSecretEnv === "string" ? { webhookSecretEnv: sv.webhookSecretEnv } : {}),
      ...(typeof sv.syncTokenEnv === "string" ? { syncTokenEnv: sv.syncTokenEnv } : {}),
      ...(typeof sv.stateTokenEnv === "string" ? { stateTokenEnv: sv.stateTokenEnv } : {}),
      ...(typeof sv.pagesTokenEnv === "string" ? { pagesTokenEnv: sv.pagesTokenEnv } : {}),
      ...(typeof sv.promoteTokenEnv === "string" ? { promoteTokenEnv: sv.promoteTokenEnv } : {}),
    },
    secrets: secretsConfig((doc.secrets ?? {}) as Raw, resolve),
    limits: {
      maxFileBytes: typeof lim.maxFileBytes === "number" ? lim.maxFileBytes : 5 * 1024 * 1024,
      maxFiles: typeof lim.maxFiles === "number" ? lim.maxFiles : 50_000,
      maxDepth: typeof lim.maxDepth === "number" ? lim.maxDepth : 128,
      maxResponseBytes: typeof lim.maxResponseBytes === "number" ? lim.maxResponseBytes : 4 * 1024 * 1024,
      maxDocumentsPerFile: typeof lim.maxDocumentsPerFile === "number" ? lim.maxDocumentsPerFile : 1000,
      maxDocuments: typeof lim.maxDocuments === "number" ? lim.maxDocuments : 200_000,
      ...(typeof lim.concurrentEnvironments === "number" ? { concurrentEnvironments: lim.concurrentEnvironments } : {}),
    },
    ...(typeof doc.selector === "string" ? { selector: doc.selector } : {}),
    ...(doc.notifications === undefined ? {} : { notifications: notificationsFromDocument(doc.notifications)! }),
    ...(doc.telemetry === undefined ? {} : { telemetry: telemetryFromDocument(doc.telemetry) }),
    ...(doc.rules === undefined ? {} : { rules: rulesFromDocument(doc.rules, baseDir, parseDuration)! }),
    ...(doc.values === undefined ? {} : { values: valuesFromDocument(doc.values) }),
    ...(doc.environments === undefined ? {} : { environments: environmentsFromDocument(doc.environments as Raw, resolve, file) }),
    document: doc,
  };
}

/** A settings file as loaded: its bytes, the typed config, and where a path of it is in the text. */
export interface LoadedSettings {
  readonly bytes: Buffer;
  readonly config: GatesyncConfig;
  readonly locate: ReturnType<typeof checkConfigText>["locate"];
}

/**
 * The one loader of a settings file: its bytes read, its text checked (schema, selectors,
 * environments, rulesets; `complete` as checkConfigText takes it), the typed config built.
 * `file` is the name problems are located in, `absolute` where it is read from.
 */
export async function loadSettingsFile(
  file: string,
  absolute: string,
  schemas: SchemaRegistry,
  complete?: Parameters<typeof checkConfigText>[4],
): Promise<LoadedSettings> {
  const bytes = await readConfigFile(file, absolute);
  const { document, locate } = checkConfigText(bytes, file, absolute, schemas, complete);
  return { bytes, config: configFromDocument(document, absolute, path.dirname(absolute)), locate };
}

/** Reads and validates gatesync.yaml; every problem is reported with its position. */
export async function loadConfig(file: string, schemas: SchemaRegistry = new SchemaRegistry()): Promise<GatesyncConfig> {
  return (await loadSettingsFile(file, path.resolve(file), schemas)).config;
}
