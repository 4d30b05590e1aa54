/** `gatesync run`: the reconcile loop and its HTTP server, assembled from a config. */
import { createHash } from "node:crypto";
import { readFile } from "node:fs/promises";
import type { Dispatcher } from "undici";
import { managementDispatcher } from "../apply/http-client.js";
import type { GatesyncConfig } from "../config/config.js";
import type { Logger } from "../logger.js";
import type { Plan } from "../plan/plan.js";
import { LeaderElector } from "../record/leader.js";
import type { ForwardedReason } from "../record/trigger-relay.js";
import { openStateBackend, postgresUrl } from "../record/open-backend.js";
import type { StateBackend } from "../record/state.js";
import { registerCredentials } from "../config/credentials.js";
import { urlCredentials } from "../secrets/credentials.js";
import { createSource } from "../source/create-source.js";
import type { Source } from "../source/source.js";
import { RepositoryValidator } from "../validate/validate-repository.js";
import { ConfigReloader } from "./config-reload.js";
import { TeamSettingsReader, settingsFingerprint } from "./repository-settings.js";
import { environmentsOf, implicitEnvironmentName } from "../config/environments.js";
import { startEnvironmentsDaemon } from "./environments-daemon.js";
import { withRulesets } from "../rules/prepare-rules.js";
import type { ReloadResult } from "./config-reload.js";
import { DaemonMetrics } from "./metrics.js";
import { Reconciler } from "./reconciler.js";
import type { RunReport } from "../apply/run-report.js";
import { startDaemonServer } from "./server.js";
import type { DaemonServer, DaemonServerOptions } from "./server.js";
import { createNotifier } from "../notify/create-notifier.js";
import type { Notifier } from "../notify/notifier.js";
import { RunHistory } from "./ui/run-history.js";
import { statusPage } from "./ui/status-page.js";
import { stateViews } from "./state-views.js";
import type { CachedState } from "./ui/page-cache.js";
import type { PlanPreview } from "./ui/plan-preview.js";

export interface DaemonOptions {
  readonly config: GatesyncConfig;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger;
  /** Overrides `server.listen`. */
  readonly listen?: string;
  /** Serve HTTP (default true). */
  readonly serve?: boolean;
  readonly onRun?: (report: RunReport, plan: Plan | undefined) => void;
  readonly retryBaseMs?: number;
  /** Whether this replica may apply (leader election). */
  readonly canApply?: () => boolean;
  readonly role?: () => string;
  /** A state backend to use instead of the config's. */
  readonly state?: StateBackend;
  /** Reload gatesync.yaml when it changes (default true when the config came from a file). */
  readonly watchConfig?: boolean;
  /** Rebuilds the daemon for a reloaded config whose source, state or server changed. */
  readonly onRestart?: (config: GatesyncConfig) => Promise<void>;
}

export interface Daemon {
  readonly url: string | undefined;
  /** The reconcile loop (with environments: the first environment's; each one's is in `environments`). */
  readonly reconciler: Reconciler;
  /** Each environment's reconcile loop, by name (`default` for a config without environments). */
  readonly environments: ReadonlyMap<string, Reconciler>;
  readonly metrics: DaemonMetrics;
  /** The first run's report (with environments: once each has run, the worst of them). */
  readonly firstRun: Promise<RunReport>;
  /** The gatesync.yaml in force (a reload replaces it). */
  configInForce(): GatesyncConfig;
  /** Reloads gatesync.yaml now (SIGHUP); "refused" keeps the last good config. */
  reload(reason: string): Promise<ReloadResult>;
  stop(): Promise<void>;
}

/** The file's text, the overlays it names and its rulesets (a changed overlay or ruleset is a changed config: reloaded in place). */
export async function configHashOf(config: GatesyncConfig): Promise<string> {
  const text = config.file === undefined ? JSON.stringify(config) : await readFile(config.file);
  return createHash("sha256")
    .update(await settingsFingerprint(text, config))
    .update(config.rulesets?.hash ?? "")
    .digest("hex")
    .slice(0, 16);
}

export async function startDaemon(given: DaemonOptions): Promise<Daemon> {
  // the rulesets are bundled with the config: a reload that breaks one keeps these
  const bundled = await withRulesets(given.config);
  if (!environmentsOf(bundled)[0]!.implicit) return startEnvironmentsDaemon(given, bundled);
  let resolveFirst: (r: RunReport) => void = () => undefined;
  const firstRun = new Promise<RunReport>((resolve) => (resolveFirst = resolve));
  const onRun = (report: RunReport, plan: Plan | undefined): void => {
    resolveFirst(report);
    given.onRun?.(report, plan);
  };
  const opts = { ...given, config: bundled, onRun };
  const { config, env, logger } = opts;
  registerCredentials(config, env);
  if (config.source.type === "git" && urlCredentials(config.source.url).length > 0) {
    logger.warn(
      { setting: "source.git.url", hint: "remove the credentials from the URL and name the variable holding the token in source.git.tokenEnv" },
      "the git URL carries credentials",
    );
  }
  const source = createSource(config, env);
  const state = opts.state ?? openStateBackend(config, env);
  const dispatcher = managementDispatcher();
  const metrics = new DaemonMetrics();
  // (the callback runs only after start(), once `reconciler` below exists)
  const election = electLeader(opts, metrics, {
    onChange: (leader) => {
      notifier?.leaderChanged(leader);
      if (leader) reconciler.trigger("leadership");
      else reconciler.interrupt();
    },
    // a webhook or sync a standby received, acknowledged by this leader
    onTrigger: (reason, traceparent) => reconciler.trigger(reason, traceparent),
  });
  const validator = new RepositoryValidator();
  const history = new RunHistory();
  // the server's address, known once it listens (links in notifications point at its /status)
  const own: { url?: string | undefined } = {};
  const notifier = createNotifier(config, { env, logger, registry: metrics.registry, ownUrl: () => own.url });
  const reconciler = await createReconciler(opts, { source, state, validator, dispatcher, metrics, history, notifier, canApply: election.canApply });
  // the pages, /status and the plan preview share one snapshot of the state (page-cache.ts);
  // a PostgreSQL state is shared by replicas (a standby's state is written by the leader): 2 s
  const { snapshots, preview } = stateViews({ reconciler, history, state, validator, env, writtenElsewhere: config.state.backend === "postgres" });
  const reloader =
    config.file === undefined
      ? undefined
      : new ConfigReloader({
          file: config.file,
          reconciler,
          logger,
          hashOf: configHashOf,
          ...(opts.onRestart === undefined ? {} : { onRestart: opts.onRestart }),
        });
  const server =
    opts.serve === false
      ? undefined
      : await serve(opts, { reconciler, metrics, state: snapshots, history, preview, reloader, source, role: election.role, elector: election.elector });
  own.url = server?.url;
  election.elector?.start();
  reconciler.start();
  if (opts.watchConfig !== false) reloader?.watch();
  logger.info({ source: source.description, url: server?.url }, "daemon started");
  return {
    url: server?.url,
    reconciler,
    environments: new Map([[implicitEnvironmentName, reconciler]]),
    metrics,
    firstRun,
    configInForce: () => reconciler.configInForce.config,
    reload: async (reason) => (reloader === undefined ? "unchanged" : reloader.reload(reason)),
    stop: async () => {
      reloader?.stop();
      await reconciler.stop();
      await election.elector?.stop();
      await server?.close();
      await notifier?.close();
      await dispatcher.close();
      await state.close();
      logger.info("daemon stopped");
    },
  };
}

interface Election {
  readonly elector: LeaderElector | undefined;
  /** Whether this replica may apply now; undefined: always. */
  readonly canApply: (() => boolean) | undefined;
  readonly role: (() => string) | undefined;
}

/** With a shared (postgres) state, replicas elect one leader; only it applies. */
function electLeader(
  opts: DaemonOptions,
  metrics: DaemonMetrics,
  hooks: { readonly onChange: (leader: boolean) => void; readonly onTrigger: (reason: ForwardedReason, traceparent: string | undefined) => void },
): Election {
  const { config, env, logger } = opts;
  const elector =
    config.state.backend === "postgres" && opts.canApply === undefined
      ? new LeaderElector({
          url: postgresUrl(config, env),
          schema: config.state.schema,
          logger,
          onChange: (leader) => {
            metrics.setLeader(leader);
            hooks.onChange(leader);
          },
          onTrigger: (reason, _from, traceparent) => hooks.onTrigger(reason, traceparent),
        })
      : undefined;
  const canApply = opts.canApply ?? (elector === undefined ? undefined : () => elector.isLeader());
  const role = opts.role ?? (elector === undefined ? undefined : () => (elector.isLeader() ? "leader" : "standby"));
  metrics.setLeader(canApply === undefined || canApply());
  return { elector, canApply, role };
}

interface ReconcilerParts {
  readonly source: Source;
  readonly state: StateBackend;
  readonly validator: RepositoryValidator;
  readonly dispatcher: Dispatcher;
  readonly metrics: DaemonMetrics;
  readonly history: RunHistory;
  readonly notifier: Notifier | undefined;
  readonly canApply: (() => boolean) | undefined;
}

/** The reconcile loop; each run's report goes to the history, the notifier and `opts.onRun`. */
async function createReconciler(opts: DaemonOptions, parts: ReconcilerParts): Promise<Reconciler> {
  const { config, env, logger } = opts;
  const { history, notifier, canApply } = parts;
  return new Reconciler({
    config,
    configHash: await configHashOf(config),
    source: parts.source,
    state: parts.state,
    validator: parts.validator,
    env,
    logger,
    dispatcher: parts.dispatcher,
    metrics: parts.metrics,
    ...(canApply === undefined ? {} : { canApply }),
    ...(opts.retryBaseMs === undefined ? {} : { retryBaseMs: opts.retryBaseMs }),
    observer: history,
    teamSettings: new TeamSettingsReader(logger),
    ...(notifier === undefined ? {} : { onRunStart: (where: { commit?: string }) => notifier.runStarted(where.commit) }),
    onRun: (report, plan) => {
      history.runFinished(report, plan);
      notifier?.runFinished(report);
      opts.onRun?.(report, plan);
    },
  });
}

interface ServedParts {
  readonly reconciler: Reconciler;
  readonly metrics: DaemonMetrics;
  readonly state: CachedState;
  readonly history: RunHistory;
  readonly preview: PlanPreview;
  readonly reloader: ConfigReloader | undefined;
  readonly source: Source;
  readonly role: (() => string) | undefined;
  readonly elector: LeaderElector | undefined;
}

/** The HTTP server: status page, /status, metrics, webhook and sync. */
function serve(opts: DaemonOptions, parts: ServedParts): Promise<DaemonServer> {
  const { config, env, logger } = opts;
  const { reconciler, state, reloader, role } = parts;
  return startDaemonServer({
    listen: opts.listen ?? config.server.listen,
    reconciler,
    metrics: parts.metrics,
    state,
    logger,
    sourceDescription: parts.source.description,
    ...serverTokens(config, env, logger),
    ...(role === undefined ? {} : { role }),
    ...(parts.elector === undefined ? {} : { relay: parts.elector }),
    ...(reloader === undefined ? {} : { config: () => reloader.status }),
    operatorConfig: () => parts.reconciler.configInForce.config,
    page: statusPage({
      reconciler,
      history: parts.history,
      preview: parts.preview,
      state,
      source: parts.source.description,
      role: role ?? (() => "single"),
      onError: (err) => logger.error({ err: (err as Error).message }, "status page failed"),
    }),
  });
}

/**
 * The tokens the daemon's routes check, from the variables gatesync.yaml names (an empty value is
 * unset), with a warning for each trigger route left without one: one daemon or many environments.
 */
export function serverTokens(
  config: GatesyncConfig,
  env: Readonly<Record<string, string | undefined>>,
  logger: Logger,
): Pick<DaemonServerOptions, "webhookSecret" | "syncToken" | "stateToken" | "pagesToken" | "variables"> {
  const secret = (name: string | undefined): string | undefined => (name === undefined || env[name] === "" ? undefined : env[name]);
  const webhookSecret = secret(config.server.webhookSecretEnv);
  const syncToken = secret(config.server.syncTokenEnv);
  const stateToken = secret(config.server.stateTokenEnv);
  const pagesToken = secret(config.server.pagesTokenEnv);
  warnUnsetTriggers(config, { webhookSecret, syncToken }, logger);
  return {
    ...(webhookSecret === undefined ? {} : { webhookSecret }),
    ...(syncToken === undefined ? {} : { syncToken }),
    ...(stateToken === undefined ? {} : { stateToken }),
    variables: { webhookSecretEnv: config.server.webhookSecretEnv, syncTokenEnv: config.server.syncTokenEnv },
    ...(pagesToken === undefined ? {} : { pagesToken }),
  };
}

/**
 * Said at start: a trigger whose variable is unset answers 404, so pushes wait for the
 * schedule. A variable gatesync.yaml names but the environment lacks is a mistake (a warning);
 * a trigger not configured at all is a choice (info).
 */
function warnUnsetTriggers(config: GatesyncConfig, values: { webhookSecret: string | undefined; syncToken: string | undefined }, logger: Logger): void {
  const every = config.schedule.intervalMs / 1000;
  const triggers = [
    { route: "POST /hooks/git", setting: "server.webhookSecretEnv", variable: config.server.webhookSecretEnv, value: values.webhookSecret },
    { route: "POST /sync", setting: "server.syncTokenEnv", variable: config.server.syncTokenEnv, value: values.syncToken },
  ];
  for (const t of triggers) {
    if (t.value !== undefined) continue;
    if (t.variable === undefined) {
      logger.info({ route: t.route, setting: t.setting, scheduleSeconds: every }, "trigger not configured: it answers 404, runs follow the schedule");
    } else {
      logger.warn(
        { route: t.route, setting: t.setting, variable: t.variable, scheduleSeconds: every, hint: `set ${t.variable} in the daemon's environment` },
        "trigger variable not set: it answers 404 until it is, runs follow the schedule",
      );
    }
  }
}
