/**
 * `gatesync run` for a config with `environments:`: one daemon serves every environment — a
 * reconcile loop, state lock, schedule and run history each — over one source, one server and
 * one metrics registry (every run metric labelled `environment`).
 *
 * A trigger (webhook, sync, a changed file) runs every environment: each re-plans the new
 * revision against its own state and applies only where its plan is not empty, so a commit
 * changes exactly the environments whose resources it changes. Environments run side by side, at
 * most limits.concurrentEnvironments at once (each its runs one after another, each run reading
 * one commit's files: shared-source.ts).
 *
 * On a PostgreSQL state the replicas of `gatesync run` form a fleet (src/fleet/): each
 * environment is led by one replica at a time through its lease; a trigger received by any
 * replica reaches the leader of each environment.
 */
import { availableParallelism } from "node:os";
import type { RunReport } from "../apply/run-report.js";
import { managementDispatcher } from "../apply/http-client.js";
import { TargetPacers } from "../apply/target-pacers.js";
import type { GatesyncConfig } from "../config/config.js";
import { environmentsOf } from "../config/environments.js";
import type { EnvironmentConfig } from "../config/environments.js";
import { FleetLeases } from "../fleet/leases.js";
import { postgresUrl } from "../record/open-backend.js";
import { registerCredentials } from "../config/credentials.js";
import { createSource } from "../source/create-source.js";
import { RepositoryValidator } from "../validate/validate-repository.js";
import { ConfigReloader } from "./config-reload.js";
import { TeamSettingsReader } from "./repository-settings.js";
import type { Daemon, DaemonOptions } from "./daemon.js";
import { configHashOf, serverTokens } from "./daemon.js";
import { environmentRoutes, environmentSync, environmentsStatus, fleetRelay } from "./environment-http.js";
import { createEnvironmentUnit } from "./environment-unit.js";
import type { EnvironmentUnit } from "./environment-unit.js";
import { DaemonMetrics } from "./metrics.js";
import type { Reconciler } from "./reconciler.js";
import { startDaemonServer } from "./server.js";
import type { DaemonServer, ServedReconciler } from "./server.js";
import { SharedSource, atMost } from "./shared-source.js";

/** The result that decides a set of runs: the first that is neither applied nor noop, else the first. */
function worst(reports: readonly RunReport[]): RunReport {
  return reports.find((r) => r.result !== "applied" && r.result !== "noop") ?? reports[0]!;
}

/** What the server and the triggers see: every environment at once. */
function allOf(units: readonly EnvironmentUnit[], source: SharedSource): ServedReconciler {
  return {
    trigger: (reason) => {
      source.invalidate();
      for (const u of units) u.reconciler.trigger(reason);
    },
    get isStopping() {
      return units.some((u) => u.reconciler.isStopping);
    },
    get synced() {
      return units.every((u) => u.reconciler.synced);
    },
    get lastRun() {
      return units.map((u) => u.reconciler.lastRun).find((r) => r !== undefined);
    },
    get lastGood() {
      return units[0]?.reconciler.lastGood;
    },
  };
}

export async function startEnvironmentsDaemon(opts: DaemonOptions, config: GatesyncConfig): Promise<Daemon> {
  const { env, logger } = opts;
  const environments = environmentsOf(config);
  for (const e of environments) registerCredentials(e.config, env);
  const source = new SharedSource(createSource(config, env));
  const dispatcher = managementDispatcher();
  const metrics = new DaemonMetrics({ environments: true });
  const names = environments.map((e) => e.name);
  const own: { url?: string | undefined } = {};
  const units = new Map<string, EnvironmentUnit>();
  const onTrigger = (envs: readonly string[], reason: string): void => {
    source.invalidate();
    for (const e of envs) units.get(e)?.reconciler.trigger(reason);
  };
  const leases =
    config.state.backend === "postgres"
      ? new FleetLeases({
          url: postgresUrl(config, env),
          schema: config.state.schema,
          environments: names,
          logger,
          ownUrl: () => own.url,
          onAcquire: (e) => {
            units.get(e)?.metrics.setLeader(true);
            units.get(e)?.notifier?.leaderChanged(true);
            units.get(e)?.reconciler.trigger("leadership");
          },
          onLose: (e) => {
            units.get(e)?.metrics.setLeader(false);
            units.get(e)?.notifier?.leaderChanged(false);
            units.get(e)?.reconciler.interrupt();
          },
          onTrigger,
          busy: (e) => units.get(e)?.history.live.running === true,
        })
      : undefined;
  const firstRuns = new Map<string, RunReport>();
  let resolveFirst: (r: RunReport) => void = () => undefined;
  const firstRun = new Promise<RunReport>((resolve) => (resolveFirst = resolve));
  const hash = await configHashOf(config);
  const shared = {
    env,
    logger,
    source,
    validator: new RepositoryValidator(),
    dispatcher,
    metrics,
    names,
    leases,
    runSlot: atMost(config.limits.concurrentEnvironments ?? availableParallelism()),
    pacers: new TargetPacers(),
    teamSettings: new TeamSettingsReader(logger),
    ...(opts.retryBaseMs === undefined ? {} : { retryBaseMs: opts.retryBaseMs }),
    ownUrl: () => own.url,
    onRun: (environment: string, report: RunReport, plan: Parameters<NonNullable<DaemonOptions["onRun"]>>[1]) => {
      opts.onRun?.(report, plan);
      if (!firstRuns.has(environment)) firstRuns.set(environment, report);
      if (firstRuns.size === names.length) resolveFirst(worst([...firstRuns.values()]));
    },
  };
  for (const e of environments) units.set(e.name, createEnvironmentUnit(e, hash, shared));
  const list = [...units.values()];
  let inForce = { config, hash };
  const reloader =
    config.file === undefined
      ? undefined
      : new ConfigReloader({
          file: config.file,
          logger,
          hashOf: configHashOf,
          reconciler: {
            get configInForce() {
              return inForce;
            },
            reconfigure: (next: GatesyncConfig, nextHash: string) => reconfigure(next, nextHash),
          },
          ...(opts.onRestart === undefined ? {} : { onRestart: opts.onRestart }),
        });
  // a reloaded config with the same environments is put in force in each; another set of environments rebuilds the daemon
  const reconfigure = (next: GatesyncConfig, nextHash: string): void => {
    const nextEnvs: EnvironmentConfig[] = environmentsOf(next);
    if (nextEnvs.map((e) => e.name).join("\n") !== names.join("\n") || nextEnvs.some((e) => e.implicit)) {
      logger.info("gatesync.yaml changed its environments: restarting the daemon");
      void opts.onRestart?.(next);
      return;
    }
    inForce = { config: next, hash: nextHash };
    for (const e of nextEnvs) units.get(e.name)?.reconciler.reconfigure(e.config, nextHash);
  };
  const served = allOf(list, source);
  const server =
    opts.serve === false
      ? undefined
      : await serveAll(opts, { config, operatorConfig: () => inForce.config, units: list, served, source, leases, reloader, metrics, onTrigger });
  own.url = server?.url;
  leases?.start();
  for (const u of list) u.reconciler.start();
  if (opts.watchConfig !== false) reloader?.watch();
  logger.info({ source: source.description, url: server?.url, environments: names, fleet: leases?.name }, "daemon started");
  return {
    url: server?.url,
    reconciler: list[0]!.reconciler,
    environments: new Map<string, Reconciler>(list.map((u) => [u.name, u.reconciler])),
    metrics,
    firstRun,
    configInForce: () => inForce.config,
    reload: async (reason) => (reloader === undefined ? "unchanged" : reloader.reload(reason)),
    stop: async () => {
      reloader?.stop();
      for (const u of list) await u.reconciler.stop();
      await leases?.stop();
      await server?.close();
      for (const u of list) await u.notifier?.close();
      await source.closeShared();
      await dispatcher.close();
      for (const u of list) await u.state.close();
      logger.info("daemon stopped");
    },
  };
}

interface ServeAllParts {
  readonly config: GatesyncConfig;
  /** The operator's config in force (a reload replaces it): GET /config. */
  readonly operatorConfig: () => GatesyncConfig;
  /** Runs these environments here (a fleet's leader runs what it is forwarded the same way). */
  readonly onTrigger: (environments: readonly string[], reason: string) => void;
  readonly units: readonly EnvironmentUnit[];
  readonly served: ServedReconciler;
  readonly source: SharedSource;
  readonly leases: FleetLeases | undefined;
  readonly reloader: ConfigReloader | undefined;
  readonly metrics: DaemonMetrics;
}

function serveAll(opts: DaemonOptions, parts: ServeAllParts): Promise<DaemonServer> {
  const { env, logger } = opts;
  const { config, units, served, leases, reloader } = parts;
  const tokens = serverTokens(config, env, logger);
  const stateToken = tokens.stateToken;
  const first = units[0]!;
  return startDaemonServer({
    listen: opts.listen ?? config.server.listen,
    reconciler: served,
    metrics: parts.metrics,
    state: first.snapshots,
    logger,
    sourceDescription: parts.source.description,
    ...tokens,
    role: () => (leases === undefined ? "single" : "fleet"),
    ...(leases === undefined
      ? {}
      : {
          relay: fleetRelay(
            leases,
            units.map((u) => u.name),
          ),
        }),
    ...(reloader === undefined ? {} : { config: () => reloader.status }),
    operatorConfig: parts.operatorConfig,
    statusBody: () => environmentsStatus({ units, leases, source: parts.source.description, served, ...(reloader === undefined ? {} : { reloader }) }),
    environmentSync: environmentSync(
      units.map((u) => u.name),
      parts.onTrigger,
      leases,
    ),
    routes: environmentRoutes({
      units,
      leases,
      source: parts.source.description,
      ...(reloader === undefined ? {} : { reloader }),
      ...(stateToken === undefined ? {} : { stateToken }),
    }),
  });
}
