/**
 * The batchable changes of one wave, in batch calls, until each settles: each batch's results
 * settle as soon as it returns; sub-requests to retry go round again (through the batch route
 * while it works); once the route proves unavailable, the rest goes as direct calls.
 *
 * Batches are made as they are sent — a body is serialised (an ApiDefinition's document read
 * again) only when its batch is next — by twice as many senders as the gateway runs calls at
 * once, and the bodies of the batches packed or in flight stay within `batchBytesInFlight`: a
 * wave of 10,000 APIs holds a few megabytes of bodies, never all of them, and no long stretch
 * of serialising holds up the answers already arriving.
 */
import { operations } from "../../contract/operations.js";
import type { Logger } from "../../logger.js";
import type { PlannedChange } from "../../plan/plan-change.js";
import type { BatchItem, BatchResult, BatchSender } from "./batch.js";
import { maxBatchBytes, packBatches, relativeUrl } from "./batch.js";
import { ByteBudget } from "./byte-budget.js";
import type { CallOutcome } from "../http-client.js";
import type { Sender } from "../sender.js";
import { batchCallSpan, batchStateWrites } from "../call-spans.js";

/**
 * Bytes of sub-request bodies in the batches packed or in flight at once (each is held again,
 * serialised, in its call's body): 8 batches of the largest size (10 of 50 ApiDefinitions with
 * documents of 7 KB), or every sender's batch of small ones.
 */
export const batchBytesInFlight = 8 * maxBatchBytes;

/** What a batch's bodies weigh (as packBatches counts them). */
const batchBytes = (items: readonly BatchItem[]): number => items.reduce((sum, i) => sum + (i.body?.length ?? 0) + i.relativeUrl.length + 200, 0);

export class Batcher {
  /** Off for the rest of the run once the batch route proves unavailable. */
  active = true;
  /** Why batching went off, when it did. */
  fallback: string | undefined;

  private readonly budget: ByteBudget;

  constructor(
    private readonly sender: Sender,
    private readonly batch: BatchSender,
    private readonly logger: Logger,
    bytesInFlight = batchBytesInFlight,
  ) {
    this.budget = new ByteBudget(bytesInFlight);
  }

  private itemOf(c: PlannedChange): BatchItem {
    const req = this.sender.requestOf(c);
    return {
      id: c.id,
      method: req.method,
      relativeUrl: relativeUrl(req.path),
      body: req.body === undefined ? undefined : JSON.stringify(req.body),
      operation: c.operation!.name,
    };
  }

  async run(changes: readonly PlannedChange[]): Promise<void> {
    const { halt } = this.sender.opts;
    // attempts made so far, of the changes sent at least once (the others: none)
    const attempts = new Map<string, number>();
    const state = { throttled: 0, delay: 0 };
    let pending = [...changes];
    while (pending.length > 0) {
      if (halt.aborted) {
        for (const c of pending) this.sender.skipped.add(c.id);
        return;
      }
      const next: PlannedChange[] = [];
      state.delay = 0;
      const unsent = await this.sendRound(pending, attempts, state, next);
      if (halt.aborted) for (const c of unsent) this.sender.skipped.add(c.id);
      // the route proved unavailable before these were packed: direct calls, as their first try
      // eslint-disable-next-line no-restricted-syntax -- bounded by the interface queue each direct call goes through
      else if (unsent.length > 0) await Promise.all(unsent.map((c) => this.sender.direct(c, attempts.get(c.id) ?? 0)));
      if (next.length > 0 && state.delay > 0) await this.sender.wait(state.delay);
      pending = this.active ? next : [];
      // eslint-disable-next-line no-restricted-syntax -- bounded by the interface queue each direct call goes through
      if (!this.active && next.length > 0) await Promise.all(next.map((c) => this.sender.direct(c, Math.max(1, attempts.get(c.id) ?? 0))));
    }
  }

  /**
   * One round: `pending` packed into batches as senders ask for them, each sent and settled.
   * Returns the changes no batch carried (the apply stopped, or the route proved unavailable).
   */
  private async sendRound(
    pending: readonly PlannedChange[],
    attempts: Map<string, number>,
    state: { throttled: number; delay: number },
    next: PlannedChange[],
  ): Promise<PlannedChange[]> {
    const { halt } = this.sender.opts;
    const byId = new Map(pending.map((c) => [c.id, c]));
    const carried = new Set<string>();
    const items = (function* (batcher: Batcher): Generator<BatchItem> {
      for (const c of pending) yield batcher.itemOf(c);
    })(this);
    const batches = packBatches(items, this.batch.settings.maxSize, maxBatchBytes, 4);
    let failure: { readonly error: unknown } | undefined;
    const stopped = (): boolean => halt.aborted || !this.active || failure !== undefined;
    // one batch, in a frame of its own: a sender waiting for the budget holds no earlier batch
    // (a suspended async function keeps its dead locals alive until they are overwritten)
    const sendNext = async (): Promise<boolean> => {
      // the largest batch's bytes are taken before packing, the rest given back once it is packed
      await this.budget.take(maxBatchBytes);
      let held = maxBatchBytes;
      try {
        if (stopped()) return false;
        const batch = batches.next();
        if (batch.done === true) return false;
        const bytes = batchBytes(batch.value);
        this.budget.give(held - bytes);
        held = bytes;
        for (const i of batch.value) carried.add(i.id);
        await this.sendAndSettle(batch.value, byId, attempts, state, next);
        return true;
      } catch (error) {
        // a document that cannot be read again, a state that cannot be written: no further batch starts
        failure ??= { error };
        return false;
      } finally {
        this.budget.give(held);
      }
    };
    const sender = async (): Promise<void> => {
      while (!stopped() && (await sendNext()));
    };
    const senders = Math.max(1, 2 * this.sender.opts.interfaces.queue(operations.batch.interface).concurrency);
    // eslint-disable-next-line no-restricted-syntax -- a fixed number of senders, each one batch at a time through the gateway queue
    await Promise.all(Array.from({ length: senders }, sender));
    if (failure !== undefined) throw failure.error;
    return pending.filter((c) => !carried.has(c.id));
  }

  /** The batch route is unavailable: this group goes direct, and so does the rest of the run. */
  private async fallBack(why: string, group: readonly PlannedChange[], attempts: ReadonlyMap<string, number>): Promise<void> {
    if (this.fallback === undefined) {
      this.fallback = why;
      this.logger.warn({ reason: why }, "batch route unavailable: falling back to direct calls for the rest of the run");
    }
    this.active = false;
    // eslint-disable-next-line no-restricted-syntax -- bounded by the interface queue each direct call goes through
    await Promise.all(group.map((c) => this.sender.direct(c, Math.max(1, attempts.get(c.id) ?? 0))));
  }

  private async sendAndSettle(
    items: BatchItem[],
    byId: ReadonlyMap<string, PlannedChange>,
    attempts: Map<string, number>,
    state: { throttled: number; delay: number },
    next: PlannedChange[],
  ): Promise<void> {
    const { recorder, halt } = this.sender.opts;
    const group = items.map((i) => byId.get(i.id)!);
    let result: BatchResult;
    try {
      result = await batchCallSpan(items.length, async () =>
        this.batch.send(items, halt, async () => {
          await batchStateWrites(group.length, "in-doubt", async () => {
            // eslint-disable-next-line no-restricted-syntax -- bounded by the batch size: at most one intent (a state write, no call) per change
            await Promise.all(group.map((c) => recorder.intent(c, true)));
          });
        }),
      );
    } catch (err) {
      await this.sender.notSent(err, group, true);
      return;
    }
    const queue = this.sender.opts.interfaces.queue(operations.batch.interface);
    const batchOutcome: CallOutcome =
      result.kind === "whole"
        ? result.outcome
        : { kind: "answered", status: result.kind === "results" ? 200 : 0, retryAfterMs: undefined, body: undefined, text: "" };
    if (result.kind === "unavailable") {
      this.sender.observe(queue, "batch", batchOutcome, group.length);
      await this.fallBack(result.why, group, attempts);
      return;
    }
    // settled together: their state writes share one journal write and fsync
    const settling: Array<Promise<void>> = [];
    const throttledBefore = state.throttled;
    for (const c of group) {
      const outcome = result.kind === "whole" ? result.outcome : result.outcomes.get(c.id)!;
      const attempt = attempts.get(c.id) ?? 0;
      const { verdict, throttle } = this.sender.judgeOutcome(c, outcome, attempt, throttledBefore, queue);
      if (throttle) state.throttled = throttledBefore + 1;
      if (verdict.kind === "retry") {
        this.sender.retries++;
        if (!verdict.pause) {
          attempts.set(c.id, attempt + 1);
          state.delay = Math.max(state.delay, verdict.delayMs);
        }
        next.push(c);
      } else {
        settling.push(recorder.settle(c, verdict, outcome, attempt + 1, true));
      }
    }
    this.sender.observe(queue, "batch", batchOutcome, group.length);
    // eslint-disable-next-line no-restricted-syntax -- state writes of one batch's results, no calls; they share one commit
    await batchStateWrites(settling.length, "outcome", async () => Promise.all(settling));
  }
}
