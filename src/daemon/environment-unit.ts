/**
 * One environment of the daemon (the implicit `default` of a config without `environments:`
 * too): its own state, reconcile loop, schedule, run history, plan preview, notifications and
 * status page; the source, the validator, the HTTP dispatcher, the metrics registry and the
 * leases are the daemon's, shared.
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
import { keptSnapshotState } from "../record/kept-snapshot-state.js";
import { openStateBackend } from "../record/open-backend.js";
import type { StateBackend, StateLock } from "../record/state.js";
import type { RepositoryValidator } from "../validate/validate-repository.js";
import type { TeamSettingsReader } from "./repository-settings.js";
import type { DaemonMetrics, RunMetrics } from "./metrics.js";
import { Reconciler } from "./reconciler.js";
import type { SharedSource } from "./shared-source.js";
import { stateViews } from "./state-views.js";
import type { CachedState } from "./ui/page-cache.js";
import { sharedRunHistory } from "./shared-history.js";
import type { RunHistory } from "./ui/run-history.js";
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
  /** On a PostgreSQL state: the leases (which environment this replica leads, and the fence). */
  readonly leases: FleetLeases | undefined;
  /** Test seams: whether this replica may apply, and its role, instead of the leases'. */
  readonly canApply?: () => boolean;
  readonly role?: () => string;
  /** Test seam: the implicit environment's state backend, instead of the config's. */
  readonly state?: StateBackend;
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
  if (environment.implicit && shared.state !== undefined) return shared.state;
  const leases = shared.leases;
  // each run reads the whole state: an unchanged one (its version, one query) is not read again
  const state = keptSnapshotState(openStateBackend(environment.config, shared.env, leases === undefined ? {} : { applicationName: leases.applicationName }));
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

/** Who applies the environment here: the test seams, else its lease, else (no shared state) always this daemon. */
function leadershipOf(name: string, shared: SharedParts): { readonly canApply: (() => boolean) | undefined; readonly role: () => string } {
  const leases = shared.leases;
  const canApply = shared.canApply ?? (leases === undefined ? undefined : () => leases.leads(name));
  const role = shared.role ?? ((): string => (leases === undefined ? "single" : leases.leads(name) ? "leader" : "standby"));
  return { canApply, role };
}

export function createEnvironmentUnit(environment: EnvironmentConfig, configHash: string, shared: SharedParts): EnvironmentUnit {
  const { name, config } = environment;
  // the implicit environment logs as a daemon of one environment always did: without the name
  const logger = environment.implicit ? shared.logger : shared.logger.child({ environment: name });
  const metrics = shared.metrics.for(name);
  const state = fencedState(environment, shared);
  const { canApply, role } = leadershipOf(name, shared);
  const leads = (): boolean => canApply === undefined || canApply();
  const replica = shared.leases === undefined ? {} : { replica: shared.leases.name };
  const history = sharedRunHistory({
    state,
    config: () => reconciler.configInForce.config,
    synced: () => reconciler.synced,
    metrics,
    leads,
    logger,
    ...replica,
  });
  const notifier = createNotifier(config, { env: shared.env, logger, registry: shared.metrics.registry, ownUrl: shared.ownUrl });
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
    ...(canApply === undefined ? {} : { canApply }),
    ...(shared.retryBaseMs === undefined ? {} : { retryBaseMs: shared.retryBaseMs }),
    observer: history,
    ...(notifier === undefined ? {} : { onRunStart: (where: { commit?: string }) => notifier.runStarted(where.commit) }),
    onRun: (report, plan) => {
      history.runFinished(report, plan);
      notifier?.runFinished(report);
      shared.onRun(name, report, plan);
    },
  });
  // a PostgreSQL state is written by whichever replica leads the environment: read again every 2 s
  const writtenElsewhere = config.state.backend === "postgres";
  const { snapshots, preview } = stateViews({ reconciler, history, state, validator: shared.validator, env: shared.env, writtenElsewhere });
  const page = statusPage({
    reconciler,
    history,
    preview,
    state: snapshots,
    source: shared.source.description,
    role,
    ...(environment.implicit ? {} : { environments: { current: name, names: shared.names } }),
    onError: (err) => logger.error({ err: (err as Error).message }, "status page failed"),
  });
  metrics.setLeader(canApply === undefined || canApply());
  return { name, config, state, snapshots, reconciler, history, metrics, notifier, page, role };
}
