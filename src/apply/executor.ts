/**
 * The apply: runs a plan's executable changes wave by wave through the interface queues (and
 * batch calls where it can), retries what may be retried, records every outcome in the state
 * as soon as it is known, runs the post-apply checks and counts what it did.
 *
 * Creates (and org-key writes carrying a quota reset) are not repeatable: their intent is
 * recorded before they are sent, they are retried only when they certainly did not reach the
 * server, and any other failure leaves them in-doubt. Nothing is ever created twice.
 */
import { setTimeout as sleep } from "node:timers/promises";
import type { Dispatcher } from "undici";
import type { GatesyncConfig } from "../config/config.js";
import { operations, queryString } from "../contract/operations.js";
import { ConfigError, ErrorCode, GatesyncError, StateError } from "../errors.js";
import type { InterfaceName } from "../kinds/kind.js";
import { knownKind } from "../kinds/registry.js";
import type { Resource } from "../kinds/resource.js";
import type { Logger } from "../logger.js";
import type { DesiredSet, Outgoing } from "../plan/desired.js";
import type { Plan, PlannedChange } from "../plan/plan.js";
import { isExecutable } from "../plan/plan.js";
import { redact } from "../plan/sensitive.js";
import { appliedRecord } from "../record/record.js";
import type { ResourceRecord, StateBackend, StateSnapshot } from "../record/state.js";
import { BatchSender, chunk, relativeUrl } from "./batch.js";
import type { BatchItem } from "./batch.js";
import type { CallOutcome } from "./http-client.js";
import { answerMessage, InterfaceClient } from "./http-client.js";
import { InterfaceQueue, NotStarted } from "./queues.js";
import type { RetryPolicy, Verdict } from "./retry.js";
import { judge, throttlePauseMs } from "./retry.js";
import { runChecks } from "./verify.js";
import type { HealthResult } from "./verify.js";

export type Env = Readonly<Record<string, string | undefined>>;

export interface Progress {
  start(total: number): void;
  done(id: string, outcome: ResourceOutcome["status"]): void;
  stop(): void;
}

export const noProgress: Progress = { start: () => undefined, done: () => undefined, stop: () => undefined };

export interface ResourceOutcome {
  readonly id: string;
  readonly status: "applied" | "failed" | "in-doubt";
  readonly message?: string;
  /** HTTP status of the last answer, when there was one. */
  readonly httpStatus?: number;
  readonly viaBatch: boolean;
  readonly attempts: number;
}

export interface ApplySummary {
  readonly applied: readonly string[];
  readonly failed: ReadonlyArray<{ readonly id: string; readonly message: string }>;
  readonly inDoubt: ReadonlyArray<{ readonly id: string; readonly message: string }>;
  readonly blocked: readonly string[];
  readonly unchanged: number;
  readonly orphans: readonly string[];
  readonly quotaResets: number;
  readonly health: readonly HealthResult[];
  readonly calls: {
    readonly gateway: number;
    readonly portal: number;
    readonly dashboard: number;
    readonly llm: number;
    /** Batch calls (operation 4), counted in `gateway` too. */
    readonly batchCalls: number;
    /** Changes that travelled inside batch calls (retries included). */
    readonly batched: number;
    readonly retries: number;
    readonly pauses: number;
  };
  readonly batchFallback?: string;
  /** Changes not started because the apply was stopped (shutdown, lost leadership, a state that cannot be written). */
  readonly skipped: readonly string[];
  readonly durationMs: number;
  /** The state could not be written (disk full, I/O error …): the apply stopped starting calls. */
  readonly stateFailure?: GatesyncError;
}

export interface ApplyDeps {
  readonly config: GatesyncConfig;
  readonly env: Env;
  /** Locked by the caller for the whole apply. */
  readonly state: StateBackend;
  readonly logger: Logger;
  readonly dispatcher: Dispatcher;
  readonly now?: () => Date;
  readonly random?: () => number;
  readonly progress?: Progress;
  /** Once aborted, no new call starts; calls in flight finish and are recorded. */
  readonly signal?: AbortSignal;
  /** Told of every HTTP call: for metrics. */
  readonly observe?: (call: CallEvent) => void;
}

export interface CallEvent {
  readonly interface: InterfaceName;
  /** The operation, or `batch` for a batch call. */
  readonly operation: string;
  /** HTTP status, or `error` when there was no answer. */
  readonly code: string;
  /** Sub-requests carried, for batch calls. */
  readonly batchSize?: number;
  readonly queueDepth: number;
}

export interface ApplyInput {
  readonly plan: Plan;
  readonly desired: DesiredSet;
  readonly resources: readonly Resource[];
  /** The key of the keyed hashes, and the key the state must store on its first write (if any). */
  readonly hashKey: { readonly key: string; readonly store: string | undefined };
  /** The state the plan was made against, read under the same lock. */
  readonly state: StateSnapshot;
  readonly commit?: string;
}

interface Credential {
  readonly header: string;
  readonly env: string;
  readonly prefix: string;
}

function credentialOf(config: GatesyncConfig, iface: InterfaceName): Credential | undefined {
  const t = config.targets;
  if (iface === "gateway" && t.gateway !== undefined) return { header: "x-gw-authorization", env: t.gateway.credentialEnv, prefix: "" };
  if (iface === "portal" && t.portal !== undefined) return { header: "authorization", env: t.portal.credentialEnv, prefix: "" };
  if (iface === "dashboard" && t.dashboard !== undefined) return { header: "authorization", env: t.dashboard.tokenEnv, prefix: "Bearer " };
  if (iface === "llm" && t.llm !== undefined) return { header: "authorization", env: t.llm.credentialEnv, prefix: "" };
  return undefined;
}

function targetUrl(config: GatesyncConfig, iface: InterfaceName): string | undefined {
  return config.targets[iface]?.url;
}

export async function executePlan(input: ApplyInput, deps: ApplyDeps): Promise<ApplySummary> {
  const started = performance.now();
  const now = deps.now ?? (() => new Date());
  const logger = deps.logger.child(input.commit === undefined ? {} : { commit: input.commit });
  const progress = deps.progress ?? noProgress;
  const config = deps.config;
  const policy: RetryPolicy = { max: config.retries.max, baseDelayMs: config.retries.baseDelayMs, maxDelayMs: config.retries.maxDelayMs };
  const executable = input.plan.changes.filter(isExecutable);

  // Credentials first: a missing one stops the apply before any call.
  const needed = new Set(executable.map((c) => c.operation!.interface));
  const missing: string[] = [];
  const clients = new Map<InterfaceName, InterfaceClient>();
  const queues = new Map<InterfaceName, InterfaceQueue>();
  for (const iface of needed) {
    const cred = credentialOf(config, iface);
    const url = targetUrl(config, iface);
    if (cred === undefined || url === undefined) {
      throw new ConfigError(ErrorCode.CONFIG_INVALID, `the plan calls the ${iface} interface, but gatesync.yaml has no targets.${iface}`, { hint: `add targets.${iface} with its url and credential variable` });
    }
    const value = deps.env[cred.env];
    if (value === undefined || value === "") {
      missing.push(cred.env);
      continue;
    }
    clients.set(iface, new InterfaceClient({ name: iface, baseUrl: url, auth: { header: cred.header, value: `${cred.prefix}${value}` }, dispatcher: deps.dispatcher, timeoutMs: config.retries.timeoutMs }));
    queues.set(iface, new InterfaceQueue(iface, config.targets[iface]!.rateLimit, logger));
  }
  const batchConfig = config.targets.gateway?.batch;
  let batchSender: BatchSender | undefined;
  if (batchConfig !== undefined && executable.some((c) => c.operation?.batchable === true)) {
    const loopbackKey = deps.env[batchConfig.keyEnv];
    if (loopbackKey === undefined || loopbackKey === "") missing.push(batchConfig.keyEnv);
    else if (clients.has("gateway")) {
      batchSender = new BatchSender(clients.get("gateway")!, queues.get("gateway")!, { listenPath: batchConfig.listenPath, loopbackKey, adminKey: deps.env[config.targets.gateway!.credentialEnv]!, maxSize: batchConfig.maxSize });
    }
  }
  if (missing.length > 0) {
    throw new ConfigError(ErrorCode.CONFIG_INVALID, `credentials missing: environment variable${missing.length === 1 ? "" : "s"} ${[...new Set(missing)].sort().join(", ")} ${missing.length === 1 ? "is" : "are"} not set`, { hint: "set them where gatesync runs; gatesync.yaml names them" });
  }

  const desiredById = new Map(input.desired.desired.map((d) => [d.id, d]));
  // the records as this apply knows them: updated in place as calls settle
  const records = new Map(input.state.resources);
  const outcomes: ResourceOutcome[] = [];
  let retries = 0;
  let batchFallback: string | undefined;
  const skipped: string[] = [];
  const observe = (iface: InterfaceName, operation: string, outcome: CallOutcome, queue: InterfaceQueue, batchSize?: number): void =>
    deps.observe?.({ interface: iface, operation, code: outcome.kind === "answered" ? String(outcome.status) : "error", queueDepth: queue.depth, ...(batchSize === undefined ? {} : { batchSize }) });
  /** Off for the rest of the run once the batch route proves unavailable. */
  let batchActive = batchSender !== undefined;

  // One signal for stopping: the caller's (shutdown, lost leadership) or a failed state write —
  // a process that cannot record must not start another call.
  const halt = new AbortController();
  deps.signal?.addEventListener("abort", () => halt.abort(), { once: true });
  if (deps.signal?.aborted === true) halt.abort();
  let stateFailure: GatesyncError | undefined;
  const write = async (record: ResourceRecord): Promise<void> => {
    try {
      await deps.state.write(record);
    } catch (err) {
      halt.abort();
      stateFailure ??= err instanceof GatesyncError ? err : new StateError(ErrorCode.STATE_IO, `cannot write the state: ${(err as Error).message}`, { cause: err });
      logger.error({ resource: record.id, err: (err as Error).message }, "state write failed: no further calls");
      throw err;
    }
  };
  /** A call that reached the server, whose outcome the state could not record. */
  const unrecorded = (c: PlannedChange, result: ResourceOutcome, serverId: string | undefined): ResourceOutcome => {
    if (result.status !== "applied") return result;
    if (repeatable(c)) return { ...result, status: "failed", message: "applied on the server, but the state could not record it: the next apply sends it again" };
    return { ...result, status: "in-doubt", message: `sent and answered${serverId === undefined ? "" : ` (server id ${serverId})`}, but the state could not record it` };
  };
  const fresh = (c: PlannedChange): ResourceRecord => {
    const t = now().toISOString();
    return { id: c.id, kind: c.kind, name: c.name, address: desiredById.get(c.id)?.request.address ?? {}, status: "failed", createdAt: t, updatedAt: t };
  };
  /** An intent recorded in this run (in-doubt, never applied) is no history to build on. */
  const history = (r: ResourceRecord | undefined): ResourceRecord | undefined => (r?.status === "in-doubt" && r.applied === undefined ? undefined : r);
  const redactResponse = (c: PlannedChange, body: unknown, out: Outgoing | undefined): unknown =>
    redact(body, input.hashKey.key, knownKind(c.kind)?.secretFields ?? [], out?.secrets ?? new Set());

  /** Records the final verdict of one change. */
  const settle = async (c: PlannedChange, verdict: Exclude<Verdict, { kind: "retry" }>, outcome: CallOutcome, attempts: number, viaBatch: boolean): Promise<void> => {
    const d = desiredById.get(c.id);
    const out = input.desired.outgoing.get(c.id);
    const prev = records.get(c.id);
    const log = logger.child({ resource: c.id });
    const t = now().toISOString();
    let record: ResourceRecord;
    let result: ResourceOutcome;
    const httpStatus = outcome.kind === "answered" ? outcome.status : undefined;
    if (verdict.kind === "success") {
      const body = outcome.kind === "answered" ? outcome.body : undefined;
      if (c.action === "orphan") {
        record = { ...(prev ?? fresh(c)), status: "applied", deactivatedAt: t, updatedAt: t };
      } else {
        const serverId = c.action === "create" ? knownKind(c.kind)?.serverId?.read(body) : undefined;
        record = appliedRecord(d!, history(prev), {
          now: t,
          ...(serverId === undefined ? {} : { serverId }),
          response: redactResponse(c, body, out),
          ...(input.commit === undefined ? {} : { commit: input.commit }),
          quotaReset: c.quotaReset === true,
        });
      }
      result = { id: c.id, status: "applied", viaBatch, attempts, ...(httpStatus === undefined ? {} : { httpStatus }) };
      log.info({ operation: c.operation?.name, status: httpStatus, attempts, viaBatch }, "resource applied");
    } else if (verdict.kind === "in-doubt") {
      record = { ...(prev ?? fresh(c)), status: "in-doubt", error: `outcome unknown: ${verdict.why}`, ...(d === undefined ? {} : { attempted: d.request.compare }), updatedAt: t };
      result = { id: c.id, status: "in-doubt", message: verdict.why, viaBatch, attempts, ...(httpStatus === undefined ? {} : { httpStatus }) };
      log.error({ operation: c.operation?.name, status: httpStatus, reason: verdict.why }, "resource in doubt");
    } else {
      // Refused, or certainly not delivered: nothing new exists on the server.
      const { attempted: _attempted, ...kept } = history(prev) ?? fresh(c);
      record = { ...kept, status: "failed", error: verdict.why, updatedAt: t };
      result = { id: c.id, status: "failed", message: verdict.why, viaBatch, attempts, ...(httpStatus === undefined ? {} : { httpStatus }) };
      log.error({ operation: c.operation?.name, status: httpStatus, reason: verdict.why }, "resource failed");
    }
    try {
      await write(record);
      records.set(c.id, record);
    } catch {
      result = unrecorded(c, result, record.serverId);
    }
    outcomes.push(result);
    progress.done(c.id, result.status);
  };

  const repeatable = (c: PlannedChange): boolean => operations[c.operation!.name].idempotent && c.quotaReset !== true;

  /** Before a call that must not be repeated: the intent, so a crash leaves it in doubt. */
  const intents = new Set<string>();
  const recordIntent = async (c: PlannedChange): Promise<void> => {
    if (repeatable(c) || intents.has(c.id)) return;
    intents.add(c.id);
    const prev = records.get(c.id);
    const d = desiredById.get(c.id);
    const t = now().toISOString();
    const record: ResourceRecord = {
      ...(prev ?? fresh(c)),
      status: "in-doubt",
      error: `sent at ${t}; no answer was recorded (the process stopped before one arrived)`,
      ...(d === undefined ? {} : { attempted: d.request.compare }),
      updatedAt: t,
    };
    await write(record);
    // keep `prev` as the record to build on, so a success or refusal restores the true history
    if (prev === undefined) records.set(c.id, record);
  };

  const describe = (o: Extract<CallOutcome, { kind: "answered" }>): string => answerMessage(o.body, o.text);

  /**
   * The verdict on one outcome. A throttle (429, 503 + Retry-After) pauses the whole interface
   * whatever the verdict, and counts a fifth of a try: `throttled` is how many this change (or
   * batch) has met so far.
   */
  const judgeOutcome = (c: PlannedChange, outcome: CallOutcome, attempt: number, throttled: number, queue: InterfaceQueue): { verdict: Verdict; throttle: boolean } => {
    const throttleAttempt = Math.floor(throttled / 5);
    const pauseMs = throttlePauseMs(outcome, policy, throttleAttempt, deps.random);
    if (pauseMs !== undefined) queue.pause(pauseMs);
    return { verdict: judge(outcome, repeatable(c), pauseMs === undefined ? attempt : throttleAttempt, policy, describe, deps.random), throttle: pauseMs !== undefined };
  };

  const requestOf = (c: PlannedChange): { method: string; path: string; body: unknown } => {
    const out = input.desired.outgoing.get(c.id);
    const op = c.operation!;
    if (c.action === "orphan") return { method: op.method, path: `${op.path}${op.query}`, body: knownKind(c.kind)!.deactivation!.body(records.get(c.id)!.applied ?? {}) };
    return { method: op.method, path: `${op.path}${queryString(out?.query ?? {}, c.quotaReset === true, encodeURIComponent)}`, body: out?.body };
  };

  /** One change, directly, until it settles. */
  const direct = async (c: PlannedChange, firstAttempt = 0): Promise<void> => {
    const iface = c.operation!.interface;
    const client = clients.get(iface)!;
    const queue = queues.get(iface)!;
    const req = requestOf(c);
    let attempt = firstAttempt;
    let throttled = 0;
    for (;;) {
      if (halt.signal.aborted) {
        skipped.push(c.id);
        return;
      }
      let outcome: CallOutcome;
      try {
        // The intent is written just before the request leaves: a call never started leaves no trace.
        outcome = await queue.run(() => client.call(req), halt.signal, () => recordIntent(c));
      } catch (err) {
        // not started: stopped, or its intent could not be recorded (then the call is not sent)
        if (!(err instanceof NotStarted) && stateFailure === undefined) throw err;
        skipped.push(c.id);
        return;
      }
      observe(iface, c.operation!.name, outcome, queue);
      const { verdict, throttle } = judgeOutcome(c, outcome, attempt, throttled, queue);
      if (throttle) throttled++;
      if (verdict.kind !== "retry") {
        await settle(c, verdict, outcome, attempt + throttled + 1, false);
        return;
      }
      retries++;
      logger.child({ resource: c.id }).warn({ operation: c.operation?.name, reason: verdict.why, delayMs: verdict.delayMs }, "call retried");
      // a pause is already on the queue: the next try waits for it there
      if (!verdict.pause) {
        attempt++;
        await sleep(verdict.delayMs);
      }
    }
  };

  /** The batchable changes of one wave, in batch calls, until each settles. */
  const batched = async (changes: PlannedChange[]): Promise<void> => {
    const sender = batchSender!;
    const attempts = new Map(changes.map((c) => [c.id, 0]));
    let throttled = 0;
    let pending = changes;
    while (pending.length > 0) {
      if (halt.signal.aborted) {
        skipped.push(...pending.map((c) => c.id));
        return;
      }
      const byId = new Map(pending.map((c) => [c.id, c]));
      const items: BatchItem[] = pending.map((c) => {
        const req = requestOf(c);
        return { id: c.id, method: req.method, relativeUrl: relativeUrl(req.path), body: req.body === undefined ? undefined : JSON.stringify(req.body) };
      });
      const next: PlannedChange[] = [];
      let delay = 0;
      // Each batch's results settle as soon as it returns, while the others are in flight.
      const sendAndSettle = async (group: BatchItem[]): Promise<void> => {
        let result: Awaited<ReturnType<BatchSender["send"]>>;
        try {
          result = await sender.send(group, halt.signal, async () => {
            // eslint-disable-next-line no-restricted-syntax -- bounded by the batch size: at most one intent (a state write, no call) per change
            await Promise.all(group.map((i) => recordIntent(byId.get(i.id)!)));
          });
        } catch (err) {
          if (!(err instanceof NotStarted) && stateFailure === undefined) throw err;
          skipped.push(...group.map((i) => i.id));
          return;
        }
        const batchOutcome: CallOutcome = result.kind === "whole" ? result.outcome : { kind: "answered", status: result.kind === "results" ? 200 : 0, retryAfterMs: undefined, body: undefined, text: "" };
        observe("gateway", "batch", batchOutcome, queues.get("gateway")!, group.length);
        if (result.kind === "unavailable") {
          if (batchFallback === undefined) {
            batchFallback = result.why;
            logger.warn({ reason: result.why }, "batch route unavailable: falling back to direct calls for the rest of the run");
          }
          batchActive = false;
          // eslint-disable-next-line no-restricted-syntax -- bounded by the interface queue each direct call goes through
          await Promise.all(group.map((i) => direct(byId.get(i.id)!, Math.max(1, attempts.get(i.id)!))));
          return;
        }
        // settled together: their state writes share one journal write and fsync
        const settling: Array<Promise<void>> = [];
        const queue = queues.get("gateway")!;
        const throttledBefore = throttled;
        for (const item of group) {
          const c = byId.get(item.id)!;
          const outcome = result.kind === "whole" ? result.outcome : result.outcomes.get(item.id)!;
          const attempt = attempts.get(item.id)!;
          const { verdict, throttle } = judgeOutcome(c, outcome, attempt, throttledBefore, queue);
          if (throttle) throttled = throttledBefore + 1;
          if (verdict.kind === "retry") {
            retries++;
            if (!verdict.pause) {
              attempts.set(item.id, attempt + 1);
              delay = Math.max(delay, verdict.delayMs);
            }
            next.push(c);
          } else {
            settling.push(settle(c, verdict, outcome, attempt + 1, true));
          }
        }
        // eslint-disable-next-line no-restricted-syntax -- state writes of one batch's results, no calls; they share one commit
        await Promise.all(settling);
      };
      // eslint-disable-next-line no-restricted-syntax -- bounded by the gateway queue every batch call goes through
      await Promise.all(chunk(items, sender.settings.maxSize).map(sendAndSettle));
      if (next.length > 0 && delay > 0) await sleep(delay);
      pending = batchActive ? next : [];
      // eslint-disable-next-line no-restricted-syntax -- bounded by the interface queue each direct call goes through
      if (!batchActive && next.length > 0) await Promise.all(next.map((c) => direct(c, Math.max(1, attempts.get(c.id)!))));
    }
  };

  progress.start(executable.length);
  try {
    if (executable.length > 0 && input.state.serial === 0) await deps.state.initialise(input.hashKey.store);
    const waves = [...new Set(executable.map((c) => c.wave))].sort((a, b) => a - b);
    for (const wave of waves) {
      if (halt.signal.aborted) {
        skipped.push(...executable.filter((c) => c.wave >= wave && !skipped.includes(c.id)).map((c) => c.id));
        break;
      }
      const inWave = executable.filter((c) => c.wave === wave);
      const viaBatch = !batchActive ? [] : inWave.filter((c) => c.operation!.batchable);
      const alone = inWave.filter((c) => !viaBatch.includes(c));
      // eslint-disable-next-line no-restricted-syntax -- bounded by the interface queues every call goes through
      await Promise.all([...alone.map((c) => direct(c)), ...(viaBatch.length > 0 ? [batched(viaBatch)] : [])]);
    }
  } finally {
    progress.stop();
  }

  // After the apply: checks of the API definitions applied in this run.
  const appliedIds = new Set(outcomes.filter((o) => o.status === "applied").map((o) => o.id));
  const health: HealthResult[] = [];
  const gatewayClient = clients.get("gateway");
  const gatewayQueue = queues.get("gateway");
  for (const r of input.resources) {
    if (halt.signal.aborted) break;
    if (r.kind !== "ApiDefinition" || !appliedIds.has(`ApiDefinition/${r.name}`) || !Array.isArray(r.spec.verify) || gatewayClient === undefined || gatewayQueue === undefined) continue;
    const result = await runChecks(r, gatewayClient, gatewayQueue, now);
    health.push(result);
    const record = records.get(result.id);
    if (record !== undefined) {
      const updated: ResourceRecord = { ...record, health: { ok: result.ok, checkedAt: result.checkedAt, results: result.checks } };
      try {
        await write(updated);
      } catch {
        break;
      }
      records.set(result.id, updated);
    }
    logger.child({ resource: result.id }).info({ ok: result.ok, checks: result.checks.length }, "checks run");
  }

  for (const q of queues.values()) q.stop();
  const by = (s: ResourceOutcome["status"]): ResourceOutcome[] => outcomes.filter((o) => o.status === s);
  const count = (i: InterfaceName): number => queues.get(i)?.started ?? 0;
  return {
    applied: by("applied").map((o) => o.id).sort(),
    failed: by("failed").map((o) => ({ id: o.id, message: o.message ?? "" })).sort((a, b) => (a.id < b.id ? -1 : 1)),
    inDoubt: by("in-doubt").map((o) => ({ id: o.id, message: o.message ?? "" })).sort((a, b) => (a.id < b.id ? -1 : 1)),
    blocked: input.plan.changes.filter((c) => c.action === "blocked").map((c) => c.id),
    unchanged: input.plan.changes.filter((c) => c.action === "no-op").length,
    orphans: input.plan.changes.filter((c) => c.action === "orphan").map((c) => c.id),
    quotaResets: executable.filter((c) => c.quotaReset === true && appliedIds.has(c.id)).length,
    health,
    calls: {
      gateway: count("gateway"),
      portal: count("portal"),
      dashboard: count("dashboard"),
      llm: count("llm"),
      batchCalls: batchSender?.calls ?? 0,
      batched: outcomes.filter((o) => o.viaBatch).length,
      retries,
      pauses: [...queues.values()].reduce((n, q) => n + q.pauses, 0),
    },
    ...(batchFallback === undefined ? {} : { batchFallback }),
    skipped: [...new Set(skipped)].sort(),
    durationMs: Math.round(performance.now() - started),
    ...(stateFailure === undefined ? {} : { stateFailure }),
  };
}
