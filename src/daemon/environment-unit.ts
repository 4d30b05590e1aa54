/**
 * One environment inside a daemon that serves several: its own state, reconcile loop, schedule,
 * run history, plan preview, notifications and status page; the source, the validator, the HTTP
 * dispatcher and the metrics registry are the daemon's, shared.
 */
import type { Dispatcher } from "undici";
import type { RunReport } from "../apply/run-report.js";
import type { TargetPacers } from "../apply/target-pacers.js";
import type { EnvironmentConfig } from "../config/environments.js";
import type { FleetLeases } from "../fleet/leases.js";
import type { Logger } from "../logger.js";
import { createNotifier } from "../notify/create-notifier.js";
import type { Notifier } from "../notify/notifier.js";
import type { Plan } from "../plan/plan.js";
import { openStateBackend } from "../record/open-backend.js";
import type { StateBackend, StateLock } from "../record/state.js";
import type { RepositoryValidator } from "../validate/validate-repository.js";
import type { TeamSettingsReader } from "./repository-settings.js";
import type { DaemonMetrics, RunMetrics } from "./metrics.js";
import { Reconciler } from "./reconciler.js";
import type { SharedSource } from "./shared-source.js";
import { stateViews } from "./state-views.js";
import type { CachedState } from "./ui/page-cache.js";
import { RunHistory } from "./ui/run-history.js";
import { statusPage } from "./ui/status-page.js";
import type { StatusPage } from "./ui/status-page.js";

export interface EnvironmentUnit {
  readonly name: string;
  readonly config: EnvironmentConfig["config"];
  readonly state: StateBackend;
  readonly snapshots: CachedState;
  readonly reconciler: Reconciler;
  readonly history: RunHistory;
  readonly metrics: RunMetrics;
  readonly notifier: Notifier | undefined;
  readonly page: StatusPage;
  /** `leader`, `standby` (a fleet) or `single`. */
  role(): string;
}

export interface SharedParts {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger;
  readonly source: SharedSource;
  readonly validator: RepositoryValidator;
  readonly dispatcher: Dispatcher;
  readonly metrics: DaemonMetrics;
  readonly names: readonly string[];
  /** With a fleet: the leases (which environment this replica leads, and the fence). */
  readonly leases: FleetLeases | undefined;
  /** A place among the environments running at once (limits.concurrentEnvironments). */
  readonly runSlot: <T>(work: () => Promise<T>) => Promise<T>;
  /** Each target's pace, kept for all the environments together (two on one gateway share its rate). */
  readonly pacers: TargetPacers;
  /** The team settings of each commit, read from the repository (one reader: its warnings logged once for all environments). */
  readonly teamSettings: TeamSettingsReader;
  readonly retryBaseMs?: number;
  readonly ownUrl: () => string | undefined;
  readonly onRun: (environment: string, report: RunReport, plan: Plan | undefined) => void;
}

/**
 * The environment's state; in a fleet, a state lock whose fence also asks the lease, so a run
 * that lost its environment's lease sends nothing more (checked before every call, as the
 * lock's own fence is), and sessions named for the replica (a takeover ends them).
 */
function fencedState(environment: EnvironmentConfig, shared: SharedParts): StateBackend {
  const leases = shared.leases;
  const state = openStateBackend(environment.config, shared.env, leases === undefined ? {} : { applicationName: leases.applicationName });
  if (leases === undefined) return state;
  const name = environment.name;
  const lock = async (owner: string): Promise<StateLock> => {
    leases.check(name);
    const held = await state.lock(`${owner} for environment ${name}`);
    return {
      release: () => held.release(),
      check: () => {
        leases.check(name);
        held.check();
      },
    };
  };
  return new Proxy(state, {
    get(target, key, receiver) {
      if (key === "lock") return lock;
      const value: unknown = Reflect.get(target, key, receiver);
      return typeof value === "function" ? (value as (...args: unknown[]) => unknown).bind(target) : value;
    },
  });
}

export function createEnvironmentUnit(environment: EnvironmentConfig, configHash: string, shared: SharedParts): EnvironmentUnit {
  const { name, config } = environment;
  const logger = shared.logger.child({ environment: name });
  const metrics = shared.metrics.for(name);
  const state = fencedState(environment, shared);
  const history = new RunHistory();
  const notifier = createNotifier(config, { env: shared.env, logger, registry: shared.metrics.registry, ownUrl: shared.ownUrl });
  const leases = shared.leases;
  const role = (): string => (leases === undefined ? "single" : leases.leads(name) ? "leader" : "standby");
  const reconciler = new Reconciler({
    config,
    configHash,
    source: shared.source,
    state,
    validator: shared.validator,
    env: shared.env,
    logger,
    dispatcher: shared.dispatcher,
    metrics,
    runSlot: shared.runSlot,
    pacers: shared.pacers,
    teamSettings: shared.teamSettings,
    ...(leases === undefined ? {} : { canApply: () => leases.leads(name) }),
    ...(shared.retryBaseMs === undefined ? {} : { retryBaseMs: shared.retryBaseMs }),
    observer: history,
    ...(notifier === undefined ? {} : { onRunStart: (where: { commit?: string }) => notifier.runStarted(where.commit) }),
    onRun: (report, plan) => {
      history.runFinished(report, plan);
      notifier?.runFinished(report);
      shared.onRun(name, report, plan);
    },
  });
  // a fleet's state is written by whichever replica leads it: read again every 2 s
  const { snapshots, preview } = stateViews({
    reconciler,
    history,
    state,
    validator: shared.validator,
    env: shared.env,
    writtenElsewhere: leases !== undefined,
  });
  const page = statusPage({
    reconciler,
    history,
    preview,
    state: snapshots,
    source: shared.source.description,
    role,
    environments: { current: name, names: shared.names },
    onError: (err) => logger.error({ err: (err as Error).message }, "status page failed"),
  });
  metrics.setLeader(leases === undefined);
  return { name, config, state, snapshots, reconciler, history, metrics, notifier, page, role };
}
