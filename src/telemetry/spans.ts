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
 * state writes in it; a resource's state write sits below its call while that call is open
 * (`key` / `under`). A command traces one run, in one shape for the process. The environments
 * of a daemon run side by side, so each of its runs' shape is its own: an AsyncLocalStorage
 * entered once per such root (`sideBySide`; never with tracing off) says which run a span belongs
 * to — at the price of Node 20's hook on every promise, which a command does not pay.
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

/** A run being traced: its root span, the phase open in it, and its calls open, by resource. */
interface RunShape {
  root: Span | undefined;
  phase: Span | undefined;
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

/** Attributes as they may leave: strings scrubbed, absent values dropped. */
export function safeAttributes(attributes: Readonly<Record<string, AttributeValue | undefined>>): Attributes {
  const out: Attributes = {};
  for (const [key, value] of Object.entries(attributes)) {
    if (value === undefined) continue;
    out[key] = typeof value === "string" ? scrubText(value) : value;
  }
  return out;
}

/** What the work inside a span may add to it (a no-op with tracing off). */
export interface SpanHandle {
  set(attributes: Readonly<Record<string, AttributeValue | undefined>>): void;
}
const noSpan: SpanHandle = { set: () => undefined };

function handleOf(span: Span): SpanHandle {
  return { set: (attributes) => void span.setAttributes(safeAttributes(attributes)) };
}

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
  /** A span with nothing below it (a state write): a child of the phase open, or of the call `under` names. */
  readonly leaf?: boolean;
  /** A call span: while it is open, the leaves `under` its key (the resource it changes) sit below it. */
  readonly key?: string;
  /** A leaf's parent: the call span open under this key, when there is one. */
  readonly under?: string;
}

/** Where a span starts, and what it is while its work runs. */
function placed(t: Installed, options: SpanOptions): { readonly parent: Context; readonly role: "root" | "phase" | "inner" } {
  const root = t.api.ROOT_CONTEXT;
  if (options.root === true) {
    const parent = options.traceparent === undefined ? root : t.api.propagation.extract(root, { traceparent: options.traceparent }, t.api.defaultTextMapGetter);
    return { parent, role: "root" };
  }
  const run = shapeNow();
  const caller = options.under === undefined ? undefined : run.calls.get(options.under);
  if (options.kind === "client" || options.leaf === true) {
    const above = caller ?? run.phase ?? run.root;
    return { parent: above === undefined ? root : t.api.trace.setSpan(root, above), role: "inner" };
  }
  return { parent: run.root === undefined ? root : t.api.trace.setSpan(root, run.root), role: "phase" };
}

/** Runs `work` inside a span named `name` (placed by the run's shape: see above), ending it however the work ends. */
export async function withSpan<T>(name: string, options: SpanOptions, work: (span: SpanHandle) => Promise<T>): Promise<T> {
  const t = installed;
  if (t === undefined) return work(noSpan);
  const kind: SpanKind = options.kind === "client" ? t.api.SpanKind.CLIENT : t.api.SpanKind.INTERNAL;
  const { parent, role } = placed(t, options);
  const traced = async (): Promise<T> => {
    const span = t.tracer.startSpan(name, { kind, attributes: safeAttributes(options.attributes ?? {}) }, parent);
    const opened = open(span, role, options.key);
    try {
      return await work(handleOf(span));
    } catch (err) {
      throw failed(t, span, err);
    } finally {
      opened();
      span.end();
    }
  };
  // a root span starts a run's shape of its own: the spans below it, whatever else runs meanwhile, are its
  return role === "root" && options.sideBySide === true ? runs.run(newShape(), traced) : traced();
}

/** Marks `span` open in the run as `role` says (and by `key`); the function that closes it again. */
function open(span: Span, role: "root" | "phase" | "inner", key: string | undefined): () => void {
  const run = shapeNow();
  if (key !== undefined) run.calls.set(key, span);
  const previous = role === "root" ? run.root : role === "phase" ? run.phase : undefined;
  if (role === "root") run.root = span;
  if (role === "phase") run.phase = span;
  return () => {
    if (key !== undefined && run.calls.get(key) === span) run.calls.delete(key);
    if (role === "root" && run.root === span) run.root = previous;
    if (role === "phase" && run.phase === span) run.phase = previous;
  };
}

/**
 * Adds to the root span of the run in progress (a daemon run's `gatesync.run`, a command's
 * `gatesync.apply` …): what its validation, plan and apply counted, said where they count it,
 * for the daemon and the CLI alike. Nothing without tracing or outside a run.
 */
export function noteOnRun(attributes: Readonly<Record<string, AttributeValue | undefined>>): void {
  shapeNow().root?.setAttributes(safeAttributes(attributes));
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
  const { parent, role } = placed(t, options);
  const span = t.tracer.startSpan(name, { attributes: safeAttributes(options.attributes ?? {}) }, parent);
  const opened = open(span, role, options.key);
  try {
    return work(handleOf(span));
  } catch (err) {
    throw failed(t, span, err);
  } finally {
    opened();
    span.end();
  }
}
