/**
 * The spans gatesync's pipeline opens, through one facade: with tracing off (the default) it
 * calls the work directly and nothing of OpenTelemetry is loaded (only its types are imported
 * here); `startTracing` (tracing.ts) installs the tracer when the operator configured an exporter.
 * Every string attribute passes through the redaction layer: a secret never leaves in a span.
 *
 * Parents are known by the shape of a run, not carried span by span in an async context (the
 * SDK's context manager wraps every span's work, which cost a traced apply more than its spans
 * did: docs/dev/performance.md). A run's root span is the parent of its phases (fetch, validate,
 * plan, each wave, the post-apply checks); the phase open is the parent of the calls and the
 * state writes in it. A direct call's own steps (its state writes) are events on its span, found
 * by the resource it changes (`key`, `withCallEvent`): a span each doubled the spans of a direct
 * apply and most of tracing's cost on it. A command traces one run, in one shape for the
 * process. The environments of a daemon run side by side, so each of its runs' shape is its own:
 * an AsyncLocalStorage entered once per such root (`sideBySide`; never with tracing off) says
 * which run a span belongs to — at the price of Node 20's hook on every promise, which a command
 * does not pay.
 */
import { AsyncLocalStorage } from "node:async_hooks";
import type { Attributes, Context, Span, SpanKind, Tracer } from "@opentelemetry/api";
import type * as OtelApi from "@opentelemetry/api";
import { scrubText } from "../secrets/redaction.js";

interface Installed {
  readonly api: typeof OtelApi;
  readonly tracer: Tracer;
}
let installed: Installed | undefined;

/** A span that others start below, and the context they start in (made once, not once a child). */
interface Parent {
  readonly span: Span;
  readonly context: Context;
}

/** A run being traced: its root span, the phase open in it, and its calls open, by resource. */
interface RunShape {
  root: Parent | undefined;
  phase: Parent | undefined;
  readonly calls: Map<string, Span>;
}
const newShape = (): RunShape => ({ root: undefined, phase: undefined, calls: new Map() });

/** The shape of each run that runs side by side with others, entered by its root span; else the process's one shape. */
const runs = new AsyncLocalStorage<RunShape>();
let outside = newShape();
const shapeNow = (): RunShape => runs.getStore() ?? outside;

/** Called by tracing.ts once the SDK runs (and with undefined after its shutdown). */
export function installTracer(next: Installed | undefined): void {
  installed = next;
  outside = newShape();
}

export const tracingOn = (): boolean => installed !== undefined;

/** A span attribute's value as gatesync sets them: one scalar. */
export type AttributeValue = string | number | boolean;

/** Attributes as they may leave (added to `into`): strings scrubbed, absent values dropped. */
export function safeAttributes(attributes: Readonly<Record<string, AttributeValue | undefined>>, into: Attributes = {}): Attributes {
  // (for…in, not Object.entries: no array per attribute, on a path taken thousands of times an apply)
  for (const key in attributes) {
    const value = attributes[key];
    if (value !== undefined) into[key] = typeof value === "string" ? scrubText(value) : value;
  }
  return into;
}

/** What the work inside a span may add to it (a no-op with tracing off). */
export interface SpanHandle {
  set(attributes: Readonly<Record<string, AttributeValue | undefined>>): void;
}
const noSpan: SpanHandle = { set: () => undefined };

export interface SpanOptions {
  readonly attributes?: Readonly<Record<string, AttributeValue | undefined>>;
  /** `client` for a call to another service (OpenTelemetry's HTTP client conventions): a child of the phase open. */
  readonly kind?: "internal" | "client";
  /** A W3C `traceparent` (a webhook's, a CI job's TRACEPARENT) the root joins as its child. */
  readonly traceparent?: string;
  /** The root span of a daemon run or a CLI command: its phases sit below it, and the run's counts are noted on it (`noteOnRun`). */
  readonly root?: boolean;
  /** A root whose run may overlap others in this process (a daemon's environments): its shape is its own. */
  readonly sideBySide?: boolean;
  /** A span with nothing below it (a batch's state writes, a post-apply check's): a child of the phase open. */
  readonly leaf?: boolean;
  /** A call span: while it is open, `withCallEvent` under its key (the resource it changes) adds to it. */
  readonly key?: string;
}

/** What a span is in its run while its work runs: the run's root, its phase open, or a span below that phase. */
type Role = "root" | "phase" | "inner";

/**
 * A span open in a run: the handle its work adds to, and what ending it puts back. One object a
 * span (no closures: a direct apply opens a thousand call spans).
 */
class OpenSpan implements SpanHandle {
  /** A root or a phase as the parent of the spans below it; the run's root or phase before it opened. */
  private readonly asParent: Parent | undefined;
  private readonly previous: Parent | undefined;

  constructor(
    t: Installed,
    readonly span: Span,
    private readonly run: RunShape,
    private readonly role: Role,
    private readonly key: string | undefined,
  ) {
    if (key !== undefined) run.calls.set(key, span);
    if (role === "inner") return;
    this.asParent = { span, context: t.api.trace.setSpan(t.api.ROOT_CONTEXT, span) };
    this.previous = role === "root" ? run.root : run.phase;
    if (role === "root") run.root = this.asParent;
    else run.phase = this.asParent;
  }

  set(attributes: Readonly<Record<string, AttributeValue | undefined>>): void {
    this.span.setAttributes(safeAttributes(attributes));
  }

  /** Ends the span, the run's shape as it was before it opened. */
  end(): void {
    const run = this.run;
    if (this.key !== undefined && run.calls.get(this.key) === this.span) run.calls.delete(this.key);
    if (this.role === "root" && run.root === this.asParent) run.root = this.previous;
    if (this.role === "phase" && run.phase === this.asParent) run.phase = this.previous;
    this.span.end();
  }
}

/** Starts a span named `name` where the run's shape places it (see above), open in that run. */
function startIn(t: Installed, name: string, options: SpanOptions): OpenSpan {
  const run = shapeNow();
  const top = t.api.ROOT_CONTEXT;
  let role: Role = "phase";
  let parent = run.root?.context ?? top;
  if (options.root === true) {
    role = "root";
    parent = options.traceparent === undefined ? top : t.api.propagation.extract(top, { traceparent: options.traceparent }, t.api.defaultTextMapGetter);
  } else if (options.kind === "client" || options.leaf === true) {
    role = "inner";
    parent = (run.phase ?? run.root)?.context ?? top;
  }
  const kind: SpanKind = options.kind === "client" ? t.api.SpanKind.CLIENT : t.api.SpanKind.INTERNAL;
  const span = t.tracer.startSpan(name, { kind, attributes: safeAttributes(options.attributes ?? {}) }, parent);
  return new OpenSpan(t, span, run, role, options.key);
}

/** Runs `work` inside a span named `name` (placed by the run's shape: see above), ending it however the work ends. */
export async function withSpan<T>(name: string, options: SpanOptions, work: (span: SpanHandle) => Promise<T>): Promise<T> {
  const t = installed;
  if (t === undefined) return work(noSpan);
  // a root span starts a run's shape of its own: the spans below it, whatever else runs meanwhile, are its
  if (options.root === true && options.sideBySide === true) return runs.run(newShape(), async () => inSpan(t, name, options, work));
  return inSpan(t, name, options, work);
}

async function inSpan<T>(t: Installed, name: string, options: SpanOptions, work: (span: SpanHandle) => Promise<T>): Promise<T> {
  const open = startIn(t, name, options);
  try {
    return await work(open);
  } catch (err) {
    throw failed(t, open.span, err);
  } finally {
    open.end();
  }
}

/**
 * Runs `work`, a step of the call open under `key` (a direct call's state write), as an event
 * named `name` on that call's span: at the step's start, with `attributes`, how long it took
 * (`gatesync.duration_ms`) and, when it threw, `error.type` and `exception.message`. An event
 * costs a small part of a span (no ids, sampling, processor or export of its own). With no call
 * open under `key` (a post-apply check's health write), the step is a leaf span of the phase.
 */
export async function withCallEvent<T>(
  name: string,
  key: string,
  attributes: Readonly<Record<string, AttributeValue | undefined>>,
  work: () => Promise<T>,
): Promise<T> {
  if (installed === undefined) return work();
  const call = shapeNow().calls.get(key);
  if (call === undefined) return withSpan(name, { attributes, leaf: true }, async () => work());
  const started = performance.now();
  const event = safeAttributes(attributes);
  try {
    return await work();
  } catch (err) {
    safeAttributes({ "error.type": errorType(err), "exception.message": err instanceof Error ? err.message : String(err) }, event);
    throw err;
  } finally {
    event["gatesync.duration_ms"] = Math.round((performance.now() - started) * 1_000) / 1_000;
    call.addEvent(name, event, started);
  }
}

/** An error's type as OpenTelemetry's `error.type` wants it, with few values: its stable code (GatesyncError, Node's), or its class. */
const errorType = (err: unknown): string => {
  const code = (err as { readonly code?: unknown } | undefined)?.code;
  return typeof code === "string" ? code : err instanceof Error ? err.name : "unknown";
};

/**
 * Adds to the root span of the run in progress (a daemon run's `gatesync.run`, a command's
 * `gatesync.apply` …): what its validation, plan and apply counted, said where they count it,
 * for the daemon and the CLI alike. Nothing without tracing or outside a run.
 */
export function noteOnRun(attributes: Readonly<Record<string, AttributeValue | undefined>>): void {
  shapeNow().root?.span.setAttributes(safeAttributes(attributes));
}

/** A span's work that threw: the span's status says so (its message through the redaction layer, like any attribute); the error, to rethrow. */
function failed(t: Installed, span: Span, err: unknown): unknown {
  span.setStatus({ code: t.api.SpanStatusCode.ERROR, message: scrubText(err instanceof Error ? err.message : String(err)) });
  return err;
}

/** `withSpan` for synchronous work (the pure planner). */
export function withSpanSync<T>(name: string, options: SpanOptions, work: (span: SpanHandle) => T): T {
  const t = installed;
  if (t === undefined) return work(noSpan);
  const open = startIn(t, name, options);
  try {
    return work(open);
  } catch (err) {
    throw failed(t, open.span, err);
  } finally {
    open.end();
  }
}
