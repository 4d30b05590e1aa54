/**
 * The HTTP client spans of the apply's calls (OpenTelemetry's HTTP client conventions):
 * the method, the route template the operation is declared with (`/gw/org/keys/{keyID}`, never
 * the path sent, which carries ids), the last status answered, the retries, and the time the
 * call waited in its interface's queue — its rate, and the pauses a Retry-After put on it.
 * And the apply's outcome counted on the run's root span.
 */
import { operations } from "../contract/operations.js";
import type { PlannedChange } from "../plan/plan-change.js";
import { noteOnRun, withSpan } from "../telemetry/spans.js";
import type { SpanHandle } from "../telemetry/spans.js";
import type { BatchResult } from "./batch/batch.js";
import type { CallOutcome } from "./http-client.js";
import type { ApplySummary } from "./types.js";

export interface CallSpan {
  /** `send`, timed: the time until it starts is the queue's. */
  timed<T>(send: () => Promise<T>): () => Promise<T>;
  /** One attempt's outcome; `retries` so far. */
  answered(outcome: CallOutcome, retries: number): void;
}

/** A CallSpan over `span`, and what it measured. */
function callSpan(span: SpanHandle): CallSpan {
  let queuedMs = 0;
  return {
    timed(send) {
      const queued = performance.now();
      return async () => {
        queuedMs += performance.now() - queued;
        return send();
      };
    },
    answered(outcome, retries) {
      span.set({
        "http.response.status_code": outcome.kind === "answered" ? outcome.status : undefined,
        "error.type": outcome.kind === "answered" ? (outcome.status >= 400 ? String(outcome.status) : undefined) : outcome.kind,
        "http.request.resend_count": retries > 0 ? retries : undefined,
        "gatesync.queue_wait_ms": Math.round(queuedMs),
      });
    },
  };
}

/** Runs one change's direct calls (every attempt) in a client span. */
export async function directCallSpan(c: PlannedChange, work: (span: CallSpan) => Promise<void>): Promise<void> {
  const op = c.operation!;
  const template = (operations as Readonly<Record<string, { readonly path: string } | undefined>>)[op.name]?.path;
  const attributes = {
    "http.request.method": op.method,
    "url.template": template,
    "gatesync.interface": op.interface,
    "gatesync.operation": op.name,
    "gatesync.resource": c.id,
  };
  // the parent of this resource's state writes while it is open (recorder.ts: `under`)
  await withSpan(`${op.method} ${template ?? op.name}`, { kind: "client", attributes, key: c.id }, async (span) => work(callSpan(span)));
}

/** One batch call (its forms tried in turn), in a client span with the number of changes it carries and the outcome. */
export async function batchCallSpan(size: number, send: () => Promise<BatchResult>): Promise<BatchResult> {
  const template = operations.batch.path;
  const attributes = {
    "http.request.method": operations.batch.method,
    "url.template": template,
    "gatesync.interface": operations.batch.interface,
    "gatesync.batch.size": size,
  };
  return withSpan(`${operations.batch.method} ${template}`, { kind: "client", attributes }, async (span) => {
    const result = await send();
    const status =
      result.kind === "whole" ? (result.outcome.kind === "answered" ? result.outcome.status : undefined) : result.kind === "results" ? 200 : undefined;
    span.set({ "http.response.status_code": status, "gatesync.batch.result": result.kind });
    return result;
  });
}

/**
 * The state writes of one batch — its changes' intents before it leaves, or their outcomes once
 * it answered — in one `gatesync.state.write` span beside the batch call (they share one commit:
 * a span each would cost more than the writes).
 */
export async function batchStateWrites<T>(records: number, what: "in-doubt" | "outcome", work: () => Promise<T>): Promise<T> {
  if (records === 0) return work();
  const attributes = { "gatesync.records": records, "gatesync.record.status": what === "in-doubt" ? "in-doubt" : undefined };
  return withSpan("gatesync.state.write", { attributes, leaf: true }, async () => work());
}

/** The apply's outcome on the run's root span (a daemon run's, a command's): what it applied, failed, left in doubt, and its calls. */
export function noteAppliedOnRun(summary: ApplySummary): void {
  noteOnRun({
    "gatesync.applied": summary.applied.length,
    "gatesync.failed": summary.failed.length,
    "gatesync.in_doubt": summary.inDoubt.length,
    "gatesync.calls.total": summary.calls.total,
  });
}
