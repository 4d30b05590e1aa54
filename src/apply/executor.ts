/**
 * The apply: runs a plan's executable changes wave by wave — through the sender (direct and
 * batched calls, retries, throttling), the recorder (intent before a non-repeatable call, the
 * verdict as soon as it settles) and the post-apply checks — and sums up what it did.
 *
 * Creates (and org-key writes carrying a quota reset) are not repeatable: their intent is
 * recorded before they are sent, they are retried only when they certainly did not reach the
 * server, and any other failure leaves them in doubt. Nothing is ever created twice.
 */
import { AbortWaiters } from "../abort-signals.js";
import { GatesyncError } from "../errors.js";
import { interfaceNames, perInterface } from "../contract/interfaces.js";
import type { InterfaceName } from "../contract/interfaces.js";
import { operations } from "../contract/operations.js";
import { kindModule } from "../kinds/registry.js";
import type { PlannedChange } from "../plan/plan-change.js";
import { isExecutable, movesRecord } from "../plan/plan-change.js";
import { Batcher } from "./batch/batched.js";
import { batchRouteGuard } from "./batch/batch-guard.js";
import type { RouteGuard } from "./batch/batch-guard.js";
import type { Interfaces } from "./clients.js";
import { openInterfaces } from "./clients.js";
import { checksChanged, runPostApply } from "./post-apply.js";
import { checkFailuresOf } from "./health-text.js";
import { Recorder } from "./records/recorder.js";
import { Sender } from "./sender.js";
import type { AppliedCalls, ApplyDeps, ApplyInput, ApplySummary } from "./types.js";
import { noProgress } from "./types.js";
import { withSpan } from "../telemetry/spans.js";
import { noteAppliedOnRun } from "./call-spans.js";

export type { ApplyDeps, ApplyInput, ApplySummary, CallEvent, Env, Progress, ResourceOutcome } from "./types.js";
export { noProgress } from "./types.js";

/**
 * The direct calls of one wave, each interface's by twice as many workers as it runs calls at
 * once: a wave of 30,000 portal, dashboard and LLM creates keeps a few dozen calls queued, not
 * 30,000 (each with its request, abort signal and listeners) for as long as the wave lasts.
 */
async function sendDirect(changes: readonly PlannedChange[], sender: Sender): Promise<void> {
  const byInterface = new Map<InterfaceName, PlannedChange[]>();
  for (const c of changes) {
    const iface = c.operation!.interface;
    const list = byInterface.get(iface);
    if (list === undefined) byInterface.set(iface, [c]);
    else list.push(c);
  }
  const workers = [...byInterface].flatMap(([iface, list]) => {
    let next = 0;
    const worker = async (): Promise<void> => {
      while (next < list.length) await sender.direct(list[next++]!);
    };
    return Array.from({ length: Math.min(list.length, Math.max(1, 2 * sender.opts.interfaces.queue(iface).concurrency)) }, worker);
  });
  // eslint-disable-next-line no-restricted-syntax -- a fixed number of workers per interface, each one call at a time through its queue
  await Promise.all(workers);
}

/** Runs the waves in order; within a wave everything runs as the queues allow. */
async function runWaves(
  executable: readonly PlannedChange[],
  sender: Sender,
  batcher: Batcher | undefined,
  halt: AbortSignal,
  guard: RouteGuard | undefined,
): Promise<void> {
  const waves = [...new Set(executable.map((c) => c.wave))].sort((a, b) => a - b);
  for (const wave of waves) {
    if (halt.aborted) {
      for (const c of executable) if (c.wave >= wave) sender.skipped.add(c.id);
      return;
    }
    const inWave = executable.filter((c) => c.wave === wave);
    // never through a route this run may have changed (batch-guard.ts)
    const batching = batcher?.active === true && (guard === undefined || wave < guard.fromWave);
    const viaBatch = batching ? inWave.filter((c) => c.operation!.batchable) : [];
    // (not viaBatch.includes: quadratic over a wave of 100,000 changes)
    const alone = batching ? inWave.filter((c) => !c.operation!.batchable) : inWave;
    const attributes = { "gatesync.wave": wave, "gatesync.changes": inWave.length, "gatesync.changes.batched": viaBatch.length };
    await withSpan("gatesync.wave", { attributes }, async () => {
      // eslint-disable-next-line no-restricted-syntax -- two: the direct calls' workers and the batches' senders
      await Promise.all([sendDirect(alone, sender), ...(viaBatch.length > 0 ? [batcher!.run(viaBatch)] : [])]);
    });
  }
}

/** The post-apply checks, in a `gatesync.post_apply` span counting their calls. */
async function checksAfter(...args: Parameters<typeof runPostApply>): ReturnType<typeof runPostApply> {
  return withSpan("gatesync.post_apply", {}, async (span) => {
    const ran = await runPostApply(...args);
    const failures = checkFailuresOf(ran.health);
    span.set({
      "gatesync.checks": ran.calls,
      "gatesync.checks.failed": failures.length,
      "gatesync.checks.failures": failures.length === 0 ? undefined : failures.join("\n"),
    });
    return ran;
  });
}

/**
 * The calls made, counted as the plan counts them. The batch calls and the checks' batch calls
 * travel on the batch route's interface: its direct calls are what it started beyond them.
 */
function countCalls(interfaces: Interfaces, sender: Sender, checks: number, viaBatch: number): AppliedCalls {
  const batchCalls = interfaces.batch?.calls ?? 0;
  const batchInterface = operations.batch.interface;
  const direct = perInterface((i) => interfaces.started(i) - (i === batchInterface ? batchCalls + checks : 0));
  const total = interfaceNames().reduce((sum, i) => sum + interfaces.started(i), 0);
  return { ...direct, batchCalls, batched: viaBatch, total, checks, retries: sender.retries, pauses: interfaces.pauses };
}

export async function executePlan(input: ApplyInput, deps: ApplyDeps): Promise<ApplySummary> {
  const logger = deps.logger.child(input.commit === undefined ? {} : { commit: input.commit });
  // Credentials first: a missing one stops the apply before any call.
  // checks added to an unchanged resource run too: their interface is opened as well
  const records = { record: (id: string) => input.state.resources.get(id) };
  const rechecked = (r: (typeof input.resources)[number]): boolean => input.recheck === true && kindModule(r.kind).postApply !== undefined;
  const checking = input.resources.filter((r) => rechecked(r) || checksChanged(r, records)).map((r) => kindModule(r.kind).interface);
  const interfaces = openInterfaces(input.plan.changes.filter(isExecutable), deps, logger, checking);
  const summary = await executeWith(input, { ...deps, logger }, interfaces);
  noteAppliedOnRun(summary);
  return summary;
}

/** Every call checks the fence first (leadership, the state's lock); a lost lock is the recorder's too: it records nothing more. */
function fenceCalls(interfaces: Interfaces, fence: () => void, recorder: Recorder): void {
  interfaces.fence(() => {
    try {
      fence();
    } catch (err) {
      if (err instanceof GatesyncError) recorder.lockLost(err);
      throw err;
    }
  });
}

/** The apply through interfaces already open (the model-based test opens simulated ones). */
export async function executeWith(input: ApplyInput, deps: Omit<ApplyDeps, "dispatcher" | "env">, interfaces: Interfaces): Promise<ApplySummary> {
  const started = performance.now();
  const now = deps.now ?? (() => new Date());
  const { config, logger } = deps;
  const progress = deps.progress ?? noProgress;
  const executable = input.plan.changes.filter(isExecutable);

  // One signal for stopping: the caller's (shutdown, lost leadership) or a failed state write —
  // a process that cannot record must not start another call.
  const halt = new AbortController();
  // removed when the apply ends: the caller's signal may outlive it (a daemon's)
  const unlinkCaller = new AbortWaiters().add(deps.signal === undefined ? [] : [deps.signal], () => halt.abort());
  // what is sent, and what its answers are redacted of: the run's desired set and bodies
  const sent = { desired: input.desired, bodies: input.desired.outgoing };
  const recorder = new Recorder({
    state: deps.state,
    snapshot: input.state,
    ...sent,
    hashKey: input.hashKey.key,
    commit: input.commit,
    now,
    logger,
    progress,
    halt,
  });
  const policy = { max: config.retries.max, baseDelayMs: config.retries.baseDelayMs, maxDelayMs: config.retries.maxDelayMs };
  const sender = new Sender({ interfaces, recorder, ...sent, policy, logger, halt: halt.signal, random: deps.random, observe: deps.observe });
  const batcher = interfaces.batch === undefined ? undefined : new Batcher(sender, interfaces.batch, logger);
  const guard = batcher === undefined ? undefined : batchRouteGuard(executable, input.resources, (id) => input.state.resources.get(id), config);
  if (guard !== undefined)
    logger.warn({ fromWave: guard.fromWave, reason: guard.reason }, "batch route may change in this run: its calls go directly from that wave on");
  if (deps.fence !== undefined) fenceCalls(interfaces, deps.fence, recorder);

  progress.start(executable.length);
  let appliedIds: Set<string>;
  let checks: Awaited<ReturnType<typeof runPostApply>>;
  try {
    try {
      if (executable.length > 0 && input.state.serial === 0) await deps.state.initialise(input.hashKey.store);
      await runWaves(executable, sender, batcher, halt.signal, guard);
    } finally {
      progress.stop();
    }
    appliedIds = new Set(recorder.appliedIds);
    checks = await checksAfter(input.resources, appliedIds, { interfaces, recorder, halt: halt.signal, now, logger, recheck: input.recheck === true });
  } finally {
    unlinkCaller();
    // a pause's timer holds the process while calls wait for it; none waits any more
    interfaces.stop();
  }

  return summaryOf(input, { executable, appliedIds, checks, recorder, sender, interfaces, batcher, guard, started });
}

/** What the summary is made of: the run's changes, and what its recorder, sender, batcher and checks saw. */
interface RunParts {
  readonly executable: readonly PlannedChange[];
  readonly appliedIds: ReadonlySet<string>;
  readonly checks: Awaited<ReturnType<typeof runPostApply>>;
  readonly recorder: Recorder;
  readonly sender: Sender;
  readonly interfaces: Interfaces;
  readonly batcher: Batcher | undefined;
  readonly guard: RouteGuard | undefined;
  readonly started: number;
}

/** The apply's summary, every list sorted. */
function summaryOf(input: ApplyInput, run: RunParts): ApplySummary {
  const { executable, appliedIds, checks, recorder, sender, interfaces, batcher, guard, started } = run;
  const byId = (a: { id: string }, b: { id: string }): number => (a.id < b.id ? -1 : 1);
  const problems = (s: "failed" | "in-doubt"): Array<{ id: string; message: string }> =>
    recorder
      .byStatus(s)
      .map((o) => ({ id: o.id, message: o.message ?? "" }))
      .sort(byId);
  const routeNote = interfaces.batch?.routeNote;
  return {
    applied: [...appliedIds].sort(),
    failed: problems("failed"),
    inDoubt: problems("in-doubt"),
    blocked: input.plan.changes.filter((c) => c.action === "blocked").map((c) => c.id),
    unchanged: input.plan.changes.filter((c) => c.action === "no-op").length,
    orphans: input.plan.changes.filter((c) => c.action === "orphan").map((c) => c.id),
    moved: input.plan.changes.filter(movesRecord).map((c) => `${c.moved!.from} → ${c.id}`),
    adopted: input.plan.changes.filter((c) => c.action === "adopt").map((c) => c.id),
    quotaResets: executable.filter((c) => c.quotaReset === true && appliedIds.has(c.id)).length,
    health: checks.health,
    calls: countCalls(interfaces, sender, checks.calls, recorder.viaBatch),
    ...(batcher?.fallback === undefined ? {} : { batchFallback: batcher.fallback }),
    ...(routeNote === undefined ? {} : { batchRoute: routeNote }),
    ...(guard === undefined ? {} : { batchGuard: `wave ${guard.fromWave} on: ${guard.reason}` }),
    skipped: [...sender.skipped].sort(),
    durationMs: Math.round(performance.now() - started),
    ...(recorder.stateFailure === undefined ? {} : { stateFailure: recorder.stateFailure }),
  };
}
