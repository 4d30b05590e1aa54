/**
 * `gatesync run`: the one composition root of the daemon. Every config runs through it the same
 * way — a config without `environments:` as its one implicit environment, `default` — with one
 * source, one server, one metrics registry and, on a PostgreSQL state, the fleet's leases to
 * decide which replica applies each environment (daemon-leases.ts).
 *
 * Each environment is a unit (environment-unit.ts): its state, reconcile loop, schedule, run
 * history and pages. A trigger (webhook, sync, a changed file) runs every environment: each
 * re-plans the new revision against its own state and applies only where its plan is not empty.
 */
import { createHash } from "node:crypto";
import { availableParallelism } from "node:os";
import { readFile } from "node:fs/promises";
import type { RunReport } from "../run/run-report.js";
import { managementDispatcher } from "../apply/http-client.js";
import { TargetPacers } from "../apply/pace/target-pacers.js";
import type { GatesyncConfig } from "../config/config.js";
import { registerCredentials } from "../config/credentials.js";
import { environmentsOf } from "../config/environments.js";
import type { EnvironmentConfig } from "../config/environments.js";
import type { FleetLeases } from "../fleet/leases.js";
import type { Logger } from "../logger.js";
import type { Plan } from "../plan/plan.js";
import type { StateBackend } from "../record/state.js";
import { withRulesets } from "../rules/prepare-rules.js";
import { urlCredentials } from "../secrets/credentials.js";
import { RepositoryValidator } from "../validate/repository/repository-validator.js";
import { ConfigReloader } from "./environments/config-reload.js";
import type { ReloadResult } from "./environments/config-reload.js";
import { serveDaemon } from "./http/daemon-http.js";
import { assertOneTokenPerPurpose } from "./http/server-tokens.js";
import { leasesFor } from "./environments/daemon-leases.js";
import { createEnvironmentUnit } from "./environments/environment-unit.js";
import type { EnvironmentUnit, SharedParts } from "./environments/environment-unit.js";
import { DaemonMetrics } from "./metrics/metrics.js";
import type { Reconciler } from "./loop/reconciler.js";
import { TeamSettingsReader, settingsFingerprint } from "./environments/repository-settings.js";
import type { DaemonServer } from "./http/server.js";
import { RunSlots } from "./environments/run-slots.js";
import { EnvironmentSources } from "./environments/environment-sources.js";
import { standbyHeadsOf } from "./environments/standby-heads.js";
import type { StandbyHeads } from "./environments/standby-heads.js";

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
  /** Test seam: whether this replica may apply, instead of the leases' (no leases are taken then). */
  readonly canApply?: () => boolean;
  /** Test seam: the role /status and /readyz say, with `canApply`. */
  readonly role?: () => string;
  /** Test seam: a state backend to use instead of the config's (a config without `environments:`). */
  readonly state?: StateBackend;
  /** Reload gatesync.yaml when it changes (default true when the config came from a file). */
  readonly watchConfig?: boolean;
  /** Rebuilds the daemon for a reloaded config whose source, state, server, environments or their `track:` changed. */
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

/** What the environments of the daemon share, and the leases that say which of them this replica applies. */
interface Assembly {
  readonly config: GatesyncConfig;
  readonly environments: readonly EnvironmentConfig[];
  readonly names: readonly string[];
  /** One source per ref the environments follow (their `track:`). */
  readonly source: EnvironmentSources;
  readonly metrics: DaemonMetrics;
  readonly leases: FleetLeases | undefined;
  /** The places among the environments' runs (a takeover's first: run-slots.ts). */
  readonly slots: RunSlots;
  readonly units: Map<string, EnvironmentUnit>;
  readonly first: FirstRuns;
  readonly own: { url?: string | undefined };
  /** Runs these environments here (a trigger this replica takes, or one another replica forwarded). */
  readonly runHere: (environments: readonly string[], reason: string, from?: string, traceparent?: string) => void;
}

export async function startDaemon(opts: DaemonOptions): Promise<Daemon> {
  // refused before anything starts: a token shared by two purposes opens both
  if (opts.serve !== false) assertOneTokenPerPurpose(opts.config, opts.env);
  // the rulesets are bundled with the config: a reload that breaks one keeps these
  const a = assemble(opts, await withRulesets(opts.config));
  const dispatcher = managementDispatcher();
  const shared = sharedParts(opts, a, dispatcher);
  const hash = await configHashOf(a.config);
  for (const e of a.environments) a.units.set(e.name, createEnvironmentUnit(e, hash, shared));
  const list = [...a.units.values()];
  const inForce = new ConfigInForce(opts, a, hash);
  const server = opts.serve === false ? undefined : await serve(opts, a, inForce);
  a.own.url = server?.url;
  a.leases?.start();
  // the first round takes this replica's leases (bounded by the lease connection's own timeouts)
  await a.leases?.firstRound();
  for (const u of list) u.reconciler.start();
  // a standby follows the environments it does not lead in one statement per interval (standby-heads.ts)
  const leases = a.leases;
  const heads =
    leases === undefined
      ? undefined
      : standbyHeadsOf(list, { env: opts.env, logger: opts.logger, applicationName: leases.applicationName, leads: (e) => leases.leads(e) });
  heads?.start();
  if (opts.watchConfig !== false) inForce.reloader?.watch();
  const implicit = a.environments[0]!.implicit;
  opts.logger.info({ source: a.source.description, url: server?.url, ...(implicit ? {} : { environments: a.names, fleet: a.leases?.name }) }, "daemon started");
  return {
    url: server?.url,
    reconciler: list[0]!.reconciler,
    environments: new Map<string, Reconciler>(list.map((u) => [u.name, u.reconciler])),
    metrics: a.metrics,
    firstRun: a.first.promise,
    configInForce: () => inForce.current.config,
    reload: async (reason) => (inForce.reloader === undefined ? "unchanged" : inForce.reloader.reload(reason)),
    stop: () => stopDaemon(opts.logger, { a, list, inForce, server, dispatcher, heads }),
  };
}

/** The source, metrics and leases of the config's environments, before any environment exists. */
function assemble(opts: DaemonOptions, config: GatesyncConfig): Assembly {
  const { env, logger } = opts;
  const environments = environmentsOf(config);
  for (const e of environments) registerCredentials(e.config, env);
  warnCredentialsInUrl(config, logger);
  const names = environments.map((e) => e.name);
  const source = new EnvironmentSources(config, environments, env);
  const units = new Map<string, EnvironmentUnit>();
  const runHere = (envs: readonly string[], reason: string, _from?: string, traceparent?: string): void => {
    source.invalidate();
    for (const e of envs) units.get(e)?.reconciler.trigger(reason, traceparent);
  };
  const own: { url?: string | undefined } = {};
  // with the test seam `canApply` the test decides who applies: no leases
  const metrics = new DaemonMetrics({ environments: !environments[0]!.implicit });
  const slots = new RunSlots(config.limits.concurrentEnvironments ?? availableParallelism());
  const leases =
    opts.canApply === undefined
      ? leasesFor({ config, env, logger, names, units, metrics, ownUrl: () => own.url, onTrigger: runHere, tookOver: (e) => slots.tookOver(e) })
      : undefined;
  return { config, environments, names, source, metrics, leases, slots, units, first: new FirstRuns(names.length), own, runHere };
}

function warnCredentialsInUrl(config: GatesyncConfig, logger: Logger): void {
  if (config.source.type !== "git" || urlCredentials(config.source.url).length === 0) return;
  logger.warn(
    { setting: "source.git.url", hint: "remove the credentials from the URL and name the variable holding the token in source.git.tokenEnv" },
    "the git URL carries credentials",
  );
}

function sharedParts(opts: DaemonOptions, a: Assembly, dispatcher: SharedParts["dispatcher"]): SharedParts {
  return {
    env: opts.env,
    logger: opts.logger,
    source: a.source,
    validator: new RepositoryValidator(),
    dispatcher,
    metrics: a.metrics,
    names: a.names,
    leases: a.leases,
    runSlots: a.slots,
    pacers: new TargetPacers(),
    teamSettings: new TeamSettingsReader(opts.logger),
    ...(opts.retryBaseMs === undefined ? {} : { retryBaseMs: opts.retryBaseMs }),
    ...(opts.canApply === undefined ? {} : { canApply: opts.canApply }),
    ...(opts.role === undefined ? {} : { role: opts.role }),
    ...(opts.state === undefined ? {} : { state: opts.state }),
    ownUrl: () => a.own.url,
    onRun: (environment, report, plan) => {
      opts.onRun?.(report, plan);
      a.first.ran(environment, report);
    },
    unitOf: (name) => a.units.get(name),
  };
}

/** The first run of every environment: resolved once each has run, with the worst of their reports. */
class FirstRuns {
  readonly promise: Promise<RunReport>;
  private readonly reports = new Map<string, RunReport>();
  private resolve: (r: RunReport) => void = () => undefined;

  constructor(private readonly count: number) {
    this.promise = new Promise<RunReport>((resolve) => (this.resolve = resolve));
  }

  ran(environment: string, report: RunReport): void {
    if (!this.reports.has(environment)) this.reports.set(environment, report);
    if (this.reports.size < this.count) return;
    const all = [...this.reports.values()];
    // the result that decides: the first that is neither applied, noop nor waiting for a promotion, else the first
    this.resolve(all.find((r) => !["applied", "noop", "waiting", "frozen"].includes(r.result)) ?? all[0]!);
  }
}

/**
 * The config in force and its reloads: a reloaded config with the same environments is put in
 * force in each of them; another set of environments (or environments added to a config that
 * had none) rebuilds the daemon.
 */
class ConfigInForce {
  current: { readonly config: GatesyncConfig; readonly hash: string };
  readonly reloader: ConfigReloader | undefined;

  constructor(
    private readonly opts: DaemonOptions,
    private readonly a: Assembly,
    hash: string,
  ) {
    this.current = { config: a.config, hash };
    const current = (): ConfigInForce["current"] => this.current;
    this.reloader =
      a.config.file === undefined
        ? undefined
        : new ConfigReloader({
            file: a.config.file,
            logger: opts.logger,
            hashOf: configHashOf,
            reconciler: {
              get configInForce() {
                return current();
              },
              reconfigure: (next, nextHash) => this.reconfigure(next, nextHash),
            },
            ...(opts.serve === false ? {} : { check: (next: GatesyncConfig) => assertOneTokenPerPurpose(next, opts.env) }),
            ...(opts.onRestart === undefined ? {} : { onRestart: opts.onRestart }),
          });
  }

  private reconfigure(next: GatesyncConfig, nextHash: string): void {
    const nextEnvs = environmentsOf(next);
    // another `track:` is another source: the daemon is rebuilt, as for another source
    const shape = (e: EnvironmentConfig): string => `${e.name}:${e.implicit}:${JSON.stringify(e.config.track ?? null)}`;
    const same = nextEnvs.map(shape).join("\n") === this.a.environments.map(shape).join("\n");
    if (!same) {
      this.opts.logger.info("gatesync.yaml changed its environments: restarting the daemon");
      void this.opts.onRestart?.(next);
      return;
    }
    this.current = { config: next, hash: nextHash };
    for (const e of nextEnvs) this.a.units.get(e.name)?.reconciler.reconfigure(e.config, nextHash);
  }
}

function serve(opts: DaemonOptions, a: Assembly, inForce: ConfigInForce): Promise<DaemonServer> {
  return serveDaemon({
    config: a.config,
    env: opts.env,
    logger: opts.logger,
    listen: opts.listen ?? a.config.server.listen,
    operatorConfig: () => inForce.current.config,
    onTrigger: a.runHere,
    units: [...a.units.values()],
    implicit: a.environments[0]!.implicit,
    source: a.source,
    leases: a.leases,
    reloader: inForce.reloader,
    metrics: a.metrics,
  });
}

interface Running {
  readonly a: Assembly;
  readonly list: readonly EnvironmentUnit[];
  readonly inForce: ConfigInForce;
  readonly server: DaemonServer | undefined;
  readonly dispatcher: SharedParts["dispatcher"];
  readonly heads: StandbyHeads | undefined;
}

/**
 * Stops taking work, lets the calls in flight settle, then gives every lease back (another
 * replica leads at once) before closing the rest.
 */
async function stopDaemon(logger: Logger, r: Running): Promise<void> {
  r.inForce.reloader?.stop();
  for (const u of r.list) await u.reconciler.stop();
  for (const u of r.list) u.verifier.stop();
  await r.heads?.stop();
  await r.a.leases?.stop();
  await r.server?.close();
  for (const u of r.list) await u.notifier?.close();
  await r.a.source.closeShared();
  await r.dispatcher.close();
  // each environment's last history row is written before its state closes
  for (const u of r.list)
    await u.history
      .settled()
      .then(async () => u.verifier.settled())
      .then(async () => u.state.close())
      .then(async () => u.ownership.close());
  logger.info("daemon stopped");
}
