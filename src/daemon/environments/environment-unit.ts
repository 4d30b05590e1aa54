/**
 * One environment of the daemon (the implicit `default` of a config without `environments:`
 * too): its own state, reconcile loop, schedule, run history, plan preview, notifications and
 * status page; the source, the validator, the HTTP dispatcher, the metrics registry and the
 * leases are the daemon's, shared.
 */
import type { Dispatcher } from "undici";
import type { RunReport } from "../../run/run-report.js";
import type { TargetPacers } from "../../apply/pace/target-pacers.js";
import type { EnvironmentConfig } from "../../config/environments.js";
import type { FleetLeases } from "../../fleet/leases.js";
import type { Logger } from "../../logger.js";
import { createNotifier } from "../../notify/create-notifier.js";
import type { Notifier } from "../../notify/notifier.js";
import type { Plan } from "../../plan/plan.js";
import { keptSnapshotState } from "../../record/wrappers/kept-snapshot-state.js";
import { openStateBackend } from "../../record/open-backend.js";
import { openOwnership } from "../../record/ownership/open-ownership.js";
import type { OwnershipRegistry } from "../../record/ownership/ownership.js";
import type { StateBackend } from "../../record/state.js";
import { LeaseFencedState } from "../../record/wrappers/lease-fenced-state.js";
import type { RepositoryValidator } from "../../validate/repository/repository-validator.js";
import type { TeamSettingsReader } from "./repository-settings.js";
import type { RunSlots } from "./run-slots.js";
import type { DaemonMetrics, RunMetrics } from "../metrics/metrics.js";
import { Reconciler } from "../loop/reconciler.js";
import type { EnvironmentSources } from "./environment-sources.js";
import { stateViews } from "../views/state-views.js";
import type { CachedState } from "../views/cached-state.js";
import { sharedRunHistory } from "../history/shared-history.js";
import type { RunHistory } from "../history/run-history.js";
import { statusPage } from "../ui/status-page.js";
import { promotedFromOf } from "../../config/promotion-section.js";
import type { Source } from "../../source/source.js";
import { PromotedSource } from "../../promotion/promoted-source.js";
import { promote } from "../../promotion/promotion.js";
import { autoPromote } from "../../promotion/auto-promotion.js";
import type { PromotionAnswer, PromotionAsk, PromotionParts } from "../../promotion/promotion.js";
import { Verifier } from "../../promotion/verifier.js";
import { promotionPanels } from "../../promotion/promotion-status.js";
import type { StatusPage } from "../ui/status-page.js";
import { HoldWatch } from "../hold/hold.js";
import type { Hold } from "../hold/hold.js";
import type { HistoryStore } from "../../record/history/history.js";

export interface EnvironmentUnit {
  readonly name: string;
  readonly config: EnvironmentConfig["config"];
  readonly state: StateBackend;
  /** The ownership registry of its state's place (docs/user/teams.md), closed with the state. */
  readonly ownership: OwnershipRegistry;
  readonly snapshots: CachedState;
  readonly reconciler: Reconciler;
  readonly history: RunHistory;
  readonly metrics: RunMetrics;
  readonly notifier: Notifier | undefined;
  readonly page: StatusPage;
  /** Verification of its revisions (promotion: docs/user/promotion.md). */
  readonly verifier: Verifier;
  /** A promotion or rollback to this environment (promotion.ts; POST /environments/NAME/promote). */
  readonly promote: (ask: PromotionAsk) => Promise<PromotionAnswer>;
  /** `leader`, `standby` (a fleet) or `single`. */
  role(): string;
  /** The freeze or closed sync window it is held by now (hold.ts), if any. */
  hold(): Promise<Hold | undefined>;
}

export interface SharedParts {
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly logger: Logger;
  /** The daemon's sources: each environment reads the one of the ref it follows. */
  readonly source: EnvironmentSources;
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
  /** The places among the environments running at once (limits.concurrentEnvironments; a takeover's run first: run-slots.ts). */
  readonly runSlots: Pick<RunSlots, "run">;
  /** Each target's pace, kept for all the environments together (two on one gateway share its rate). */
  readonly pacers: TargetPacers;
  /** The team settings of each commit, read from the repository (one reader: its warnings logged once for all environments). */
  readonly teamSettings: TeamSettingsReader;
  readonly retryBaseMs?: number;
  readonly ownUrl: () => string | undefined;
  readonly onRun: (environment: string, report: RunReport, plan: Plan | undefined) => void;
  /** Every environment of the daemon by name (a promoted one reads its source's rows). */
  readonly unitOf: (name: string) => EnvironmentUnit | undefined;
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
  // every environment's PostgreSQL state takes its connections from the process's one pool (shared-pool.ts)
  const named = leases === undefined ? {} : { applicationName: leases.applicationName };
  const state = keptSnapshotState(openStateBackend(environment.config, shared.env, { ...named, user: `environment ${environment.name}` }));
  if (leases === undefined) return state;
  const name = environment.name;
  return new LeaseFencedState(state, { environment: name, check: () => leases.check(name) });
}

/** Who applies the environment here: the test seams, else its lease, else (no shared state) always this daemon. */
function leadershipOf(name: string, shared: SharedParts): { readonly canApply: (() => boolean) | undefined; readonly role: () => string } {
  const leases = shared.leases;
  const canApply = shared.canApply ?? (leases === undefined ? undefined : () => leases.leads(name));
  const role = shared.role ?? ((): string => (leases === undefined ? "single" : leases.leads(name) ? "leader" : "standby"));
  return { canApply, role };
}

/** Where the environment's revisions come from: the shared source, or (`track: { promotedFrom }`) its promotions. */
function sourceOf(environment: EnvironmentConfig, state: StateBackend, shared: SharedParts): Source {
  const from = promotedFromOf(environment.config.track);
  if (from === undefined) return shared.source.of(environment.name);
  return new PromotedSource({ inner: shared.source.of(environment.name), state, name: environment.name, from });
}

/** `promotion: auto`'s step of the loop, before each fetch (auto-promotion.ts): asked of every promoted environment, it reads the setting in force. */
function autoPromotionOf(environment: EnvironmentConfig, shared: SharedParts): { autoPromote?: () => Promise<void> } {
  if (promotedFromOf(environment.config.track) === undefined) return {};
  const parts = promotionParts(shared);
  return { autoPromote: () => autoPromote(parts, environment.name) };
}

/** What promotions read: every unit, the shared source, the validator. */
export const promotionParts = (shared: SharedParts): PromotionParts => ({
  unit: shared.unitOf,
  sourceOf: (name) => shared.source.of(name),
  env: shared.env,
  validator: shared.validator,
  teamSettings: shared.teamSettings,
  logger: shared.logger,
  hold: async (name) => shared.unitOf(name)?.hold(),
  observe: (name, outcome) => shared.metrics.promoted(name, outcome),
});

/**
 * Has environment `name` run soon where it is led: here (this replica leads it, or there are no
 * leases), else through the fleet's relay. What it is to apply is a row in the shared state; only
 * the wake-up is a message, and a lost one waits for the schedule.
 */
export function runSoonWhereLed(shared: Pick<SharedParts, "leases" | "unitOf">, name: string, reason: string): void {
  const leases = shared.leases;
  if (leases !== undefined && !leases.leads(name)) void leases.forward([name], "sync").catch(() => undefined);
  else shared.unitOf(name)?.reconciler.trigger(reason);
}

/** The environments promoted from `name` with `promotion: auto`: asked to run when it verifies a revision. */
function wakePromoted(shared: SharedParts, name: string): void {
  for (const other of shared.names) {
    const config = shared.unitOf(other)?.reconciler.configInForce.config;
    if (promotedFromOf(config?.track) === name && config?.promotion?.mode === "auto") runSoonWhereLed(shared, other, "candidate");
  }
}

/** Whether promotion reads this environment's verifications: it is promoted from another, or another from it. */
function promotionReads(shared: SharedParts, name: string): boolean {
  const fromOf = (other: string): string | undefined => promotedFromOf(shared.unitOf(other)?.reconciler.configInForce.config.track);
  return fromOf(name) !== undefined || shared.names.some((other) => fromOf(other) === name);
}

function verifierOf(
  name: string,
  parts: { state: StateBackend; history: RunHistory; reconciler: () => Reconciler; leads: () => boolean; logger: Logger },
  shared: SharedParts,
): Verifier {
  return new Verifier({
    state: parts.state,
    bound: () => parts.reconciler().configInForce.config.history,
    soakMs: () => parts.reconciler().configInForce.config.promotion?.soakMs ?? 0,
    runs: async () => {
      await parts.history.settled();
      return parts.history.entries();
    },
    // only where promotion reads the rows: a source of another environment, or one promoted (its rollbacks)
    leads: () => parts.leads() && promotionReads(shared, name),
    trigger: (reason) => parts.reconciler().trigger(reason),
    onVerified: () => wakePromoted(shared, name),
    logger: parts.logger.child({ component: "verification" }),
    observe: shared.metrics.verification(name),
  });
}

/** The environment's freezes and sync windows (hold.ts), its gauge kept with them. */
function holdsOf(
  o: {
    readonly name: string;
    readonly state: HistoryStore;
    readonly reconciler: () => Reconciler;
    readonly notifier: Notifier | undefined;
    readonly leads: () => boolean;
  },
  shared: SharedParts,
): HoldWatch {
  const holds = new HoldWatch({
    name: o.name,
    state: o.state,
    config: (): EnvironmentConfig["config"] => o.reconciler().configInForce.config,
    trigger: (reason) => o.reconciler().trigger(reason),
  });
  holds.onChange = (hold) => shared.metrics.setHeld(o.name, hold?.kind);
  // a window's closing or opening, told once: by the replica leading the environment
  holds.onWindow = (summary) => (o.leads() ? o.notifier?.held({ summary }) : undefined);
  return holds;
}

/** What a run's end tells: the history, the verifier, the notifications, the daemon. */
function runEnded(
  name: string,
  parts: { readonly history: RunHistory; readonly verifier: Verifier; readonly notifier: Notifier | undefined },
  shared: SharedParts,
): NonNullable<ConstructorParameters<typeof Reconciler>[0]["onRun"]> {
  return (report, plan) => {
    parts.history.runFinished(report, plan);
    parts.verifier.runEnded();
    parts.notifier?.runFinished(report);
    shared.onRun(name, report, plan);
  };
}

export function createEnvironmentUnit(environment: EnvironmentConfig, configHash: string, shared: SharedParts): EnvironmentUnit {
  const { name, config } = environment;
  // the implicit environment logs as a daemon of one environment always did: without the name
  const logger = environment.implicit ? shared.logger : shared.logger.child({ environment: name });
  const metrics = shared.metrics.for(name);
  const state = fencedState(environment, shared);
  const ownership = openOwnership(config, shared.env, shared.leases === undefined ? {} : { applicationName: shared.leases.applicationName });
  const { canApply, role } = leadershipOf(name, shared);
  const leads = (): boolean => canApply === undefined || canApply();
  const replica = shared.leases === undefined ? {} : { replica: shared.leases.name };
  const inForce = { config: () => reconciler.configInForce.config, synced: () => reconciler.synced };
  const history = sharedRunHistory({ state, ...inForce, metrics, leads, logger, ...replica });
  const notifier = createNotifier(config, { env: shared.env, logger, registry: shared.metrics.registry, ownUrl: shared.ownUrl });
  const verifier = verifierOf(name, { state, history, reconciler: () => reconciler, leads, logger }, shared);
  const holds = holdsOf({ name, state, reconciler: () => reconciler, notifier, leads }, shared);
  const reconciler = new Reconciler({
    config,
    configHash,
    source: sourceOf(environment, state, shared),
    ...autoPromotionOf(environment, shared),
    state,
    ownership,
    validator: shared.validator,
    env: shared.env,
    logger,
    dispatcher: shared.dispatcher,
    metrics,
    runSlot: <T>(work: () => Promise<T>): Promise<T> => shared.runSlots.run(name, work, canApply !== undefined && !canApply()),
    pacers: shared.pacers,
    teamSettings: shared.teamSettings,
    held: (revision): Promise<string | undefined> => holds.heldFor(revision),
    ...(canApply === undefined ? {} : { canApply }),
    ...(shared.retryBaseMs === undefined ? {} : { retryBaseMs: shared.retryBaseMs }),
    observer: history,
    ...(notifier === undefined ? {} : { onRunStart: (where: { commit?: string }) => notifier.runStarted(where.commit) }),
    onRun: runEnded(name, { history, verifier, notifier }, shared),
  });
  // a PostgreSQL state is written by whichever replica leads the environment: read again every 2 s
  const writtenElsewhere = config.state.backend === "postgres";
  const { snapshots, preview } = stateViews({ reconciler, history, state, ownership, validator: shared.validator, env: shared.env, writtenElsewhere });
  const page = statusPage({
    reconciler,
    history,
    preview,
    state: snapshots,
    source: shared.source.of(name).description,
    role,
    hold: () => holds.current(),
    ...(promotedFromOf(config.track) === undefined ? {} : { promotion: promotionPanels(promotionParts(shared), name) }),
    ...(environment.implicit ? {} : { environments: { current: name, names: shared.names } }),
    onError: (err) => logger.error({ err: (err as Error).message }, "status page failed"),
  });
  metrics.setLeader(canApply === undefined || canApply());
  const promoteHere = (ask: PromotionAsk): Promise<PromotionAnswer> => promote(promotionParts(shared), name, ask);
  const hold = (): Promise<Hold | undefined> => holds.current();
  return { name, config, state, ownership, snapshots, reconciler, history, metrics, notifier, page, verifier, promote: promoteHere, role, hold };
}
