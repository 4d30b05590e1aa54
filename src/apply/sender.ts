/**
 * The sender: gets each change to its server — directly, or inside batch calls — until its
 * outcome settles, and hands every verdict to the recorder. Retries what may be retried;
 * a throttle (429, 503 + Retry-After) pauses the whole interface, and a Retry-After over the
 * cap closes it; a 429 without Retry-After halves its rate. Stopping the apply cuts every
 * wait short and starts nothing new.
 */
import { setTimeout as sleep } from "node:timers/promises";
import { queryString } from "../contract/operations.js";
import { knownKind } from "../kinds/registry.js";
import type { Logger } from "../logger.js";
import type { DesiredSet, OutgoingRequests } from "../plan/desired.js";
import { outgoingOrThrow } from "../plan/desired.js";
import type { PlannedChange } from "../plan/plan-change.js";
import type { Interfaces } from "./clients.js";
import type { CallOutcome, CallRequest } from "./http-client.js";
import { answerMessage } from "./http-client.js";
import { NotStarted, Throttled } from "./pace/queues.js";
import type { InterfaceQueue } from "./pace/queues.js";
import type { Recorder } from "./records/recorder.js";
import { repeatable } from "./records/recorder.js";
import type { RetryPolicy, Verdict } from "./pace/retry.js";
import { judge, throttlePauseMs } from "./pace/retry.js";
import type { CallEvent } from "./types.js";
import { directCallSpan } from "./call-spans.js";
import type { CallSpan } from "./call-spans.js";

export interface SenderOptions {
  readonly interfaces: Interfaces;
  readonly recorder: Recorder;
  readonly desired: DesiredSet;
  /** The bodies to send, made as each is sent (the run's: ApplyInput.desired.outgoing). */
  readonly bodies: OutgoingRequests;
  readonly policy: RetryPolicy;
  readonly logger: Logger;
  readonly halt: AbortSignal;
  readonly random: (() => number) | undefined;
  readonly observe: ((call: CallEvent) => void) | undefined;
}

const describe = (o: Extract<CallOutcome, { kind: "answered" }>): string => answerMessage(o.body, o.text);

export class Sender {
  retries = 0;
  /** Changes not started because the apply was stopped. */
  readonly skipped = new Set<string>();

  constructor(readonly opts: SenderOptions) {}

  /** The request of one change: its operation, query and body (an orphan's from its last applied request). */
  requestOf(c: PlannedChange): CallRequest & { readonly method: string; readonly path: string } {
    const out = outgoingOrThrow(this.opts.bodies.read(c.id));
    const op = c.operation!;
    if (c.action === "orphan")
      return {
        method: op.method,
        path: `${op.path}${op.query}`,
        body: knownKind(c.kind)!.deactivation!.body(this.opts.recorder.record(c.id)!.applied?.read() ?? {}, this.opts.recorder.record(c.id)!.address),
      };
    const path = `${op.path}${queryString(out?.query ?? {}, c.quotaReset === true, encodeURIComponent)}`;
    if (c.reactivate === true && out !== undefined) {
      // a deactivated object declared again: the spec's body, switched on (reactivation.ts)
      const address = { ...this.opts.desired.find(c.id)?.request.address, ...this.opts.recorder.record(c.id)?.address };
      return { method: op.method, path, body: knownKind(c.kind)!.deactivation!.reactivation.body(out.body, address, out.query) };
    }
    return { method: op.method, path, body: out?.body };
  }

  observe(queue: InterfaceQueue, operation: string, outcome: CallOutcome, batchSize?: number): void {
    const code = outcome.kind === "answered" ? String(outcome.status) : "error";
    this.opts.observe?.({
      interface: queue.name,
      operation,
      code,
      queueDepth: queue.depth,
      rate: queue.rate,
      ...(batchSize === undefined ? {} : { batchSize }),
    });
  }

  /**
   * The verdict on one outcome. A throttle pauses the whole interface whatever the verdict and
   * counts a fifth of a try (`throttled`: how many this change or batch met so far); a pause
   * over the cap closes the interface and fails the call (a throttle means it was not processed).
   */
  judgeOutcome(c: PlannedChange, outcome: CallOutcome, attempt: number, throttled: number, queue: InterfaceQueue): { verdict: Verdict; throttle: boolean } {
    const throttleAttempt = Math.floor(throttled / 5);
    const pauseMs = throttlePauseMs(outcome, this.opts.policy, throttleAttempt, this.opts.random);
    if (pauseMs === undefined) {
      if (outcome.kind === "answered") queue.speedUp();
      return {
        verdict: this.opts.recorder.settledByResend(c, judge(outcome, repeatable(c), attempt, this.opts.policy, describe, this.opts.random)),
        throttle: false,
      };
    }
    const answer = outcome as Extract<CallOutcome, { kind: "answered" }>;
    if (answer.status === 429 && answer.retryAfterMs === undefined) queue.slowDown();
    if (!queue.pause(pauseMs))
      return { verdict: { kind: "failed", why: `${answer.status}: ${describe(answer)}; ${queue.closedBecause}`, status: answer.status }, throttle: true };
    return {
      verdict: this.opts.recorder.settledByResend(c, judge(outcome, repeatable(c), throttleAttempt, this.opts.policy, describe, this.opts.random)),
      throttle: true,
    };
  }

  /** Waits, unless the apply stops meanwhile. */
  async wait(ms: number): Promise<void> {
    await sleep(ms, undefined, { signal: this.opts.halt }).catch(() => undefined);
  }

  /**
   * A call the queue did not send: stopped (the change is skipped) or throttled over the cap
   * (failed). Either way nothing of it was processed — a non-repeatable change is retried only
   * after answers that say so — so an intent written for it is withdrawn. Other errors pass through.
   */
  async notSent(err: unknown, changes: readonly PlannedChange[], viaBatch: boolean): Promise<void> {
    if (!(err instanceof NotStarted) && !(err instanceof Throttled) && this.opts.recorder.stateFailure !== undefined) {
      // its intent could not be written: the call was not sent, and the state cannot take more
      for (const c of changes) this.skipped.add(c.id);
      return;
    }
    if (err instanceof NotStarted) {
      for (const c of changes) {
        await this.opts.recorder.withdraw(c);
        this.skipped.add(c.id);
      }
      return;
    }
    if (!(err instanceof Throttled)) throw err;
    for (const c of changes) await this.opts.recorder.settle(c, { kind: "failed", why: err.message }, undefined, 0, viaBatch);
  }

  /** One change, directly, until it settles: in an HTTP client span (call-spans.ts). */
  async direct(c: PlannedChange, firstAttempt = 0): Promise<void> {
    await directCallSpan(c, async (span) => this.directCalls(c, firstAttempt, span));
  }

  private async directCalls(c: PlannedChange, firstAttempt: number, span: CallSpan): Promise<void> {
    const iface = c.operation!.interface;
    const client = this.opts.interfaces.client(iface);
    const queue = this.opts.interfaces.queue(iface);
    const req = this.requestOf(c);
    let attempt = firstAttempt;
    let throttled = 0;
    for (;;) {
      if (this.opts.halt.aborted) {
        this.skipped.add(c.id);
        return;
      }
      let outcome: CallOutcome;
      try {
        // The intent is written just before the request leaves: a call never started leaves no trace.
        outcome = await queue.run(
          span.timed(() => client.call(req)),
          this.opts.halt,
          () => this.opts.recorder.intent(c, false),
        );
      } catch (err) {
        await this.notSent(err, [c], false);
        return;
      }
      const { verdict, throttle } = this.judgeOutcome(c, outcome, attempt, throttled, queue);
      this.observe(queue, c.operation!.name, outcome);
      if (throttle) throttled++;
      span.answered(outcome, attempt + throttled);
      if (verdict.kind !== "retry") {
        await this.opts.recorder.settle(c, verdict, outcome, attempt + throttled + 1, false);
        return;
      }
      this.retries++;
      this.opts.logger.child({ resource: c.id }).warn({ operation: c.operation?.name, reason: verdict.why, delayMs: verdict.delayMs }, "call retried");
      // a pause is already on the queue: the next try waits for it there
      if (!verdict.pause) {
        attempt++;
        await this.wait(verdict.delayMs);
      }
    }
  }
}
