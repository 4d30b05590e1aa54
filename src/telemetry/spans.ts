/**
 * The spans gatesync's pipeline opens, through one facade: with tracing off (the default) it
 * calls the work directly and nothing of OpenTelemetry is loaded (only its types are imported
 * here); `startTracing` (tracing.ts) installs the tracer when the operator configured an exporter.
 * Every string attribute passes through the redaction layer: a secret never leaves in a span.
 */
import type { Attributes, Span, SpanKind, Tracer } from "@opentelemetry/api";
import type * as OtelApi from "@opentelemetry/api";
import { scrubText } from "../secrets/redaction.js";

interface Installed {
  readonly api: typeof OtelApi;
  readonly tracer: Tracer;
  /** Where the context holds the run's root span (`root: true`), which `noteOnRun` adds to. */
  readonly rootKey: symbol;
}
let installed: Installed | undefined;

/** Called by tracing.ts once the SDK runs (and with undefined after its shutdown). */
export function installTracer(next: Omit<Installed, "rootKey"> | undefined): void {
  installed = next === undefined ? undefined : { ...next, rootKey: next.api.createContextKey("gatesync.run-root") };
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
  /** `client` for a call to another service (OpenTelemetry's HTTP client conventions). */
  readonly kind?: "internal" | "client";
  /** A W3C `traceparent` (a webhook's, a CI job's TRACEPARENT) the span joins as its child. */
  readonly traceparent?: string;
  /** The root span of a daemon run or a CLI command: the spans below it note the run's counts on it (`noteOnRun`). */
  readonly root?: boolean;
  /** No span is opened inside `work` (a state write): the span is not made the active one. */
  readonly leaf?: boolean;
}

/** Runs `work` inside a span named `name` (a child of the active one), ending it however the work ends. */
export async function withSpan<T>(name: string, options: SpanOptions, work: (span: SpanHandle) => Promise<T>): Promise<T> {
  const t = installed;
  if (t === undefined) return work(noSpan);
  const kind: SpanKind = options.kind === "client" ? t.api.SpanKind.CLIENT : t.api.SpanKind.INTERNAL;
  const parent = options.traceparent === undefined ? t.api.context.active() : parentContext(t.api, options.traceparent);
  const start = { kind, attributes: safeAttributes(options.attributes ?? {}) };
  // a leaf opens no span below it: it need not be the active one (no context switch, the cost of a span in the thousands)
  if (options.leaf === true) return ended(t, t.tracer.startSpan(name, start, parent), work);
  return t.tracer.startActiveSpan(name, start, parent, async (span) =>
    ended(t, span, async (handle) =>
      options.root === true ? t.api.context.with(t.api.context.active().setValue(t.rootKey, span), async () => work(handle)) : work(handle),
    ),
  );
}

/** `work` in `span`, which ends however the work ends (marked failed when it throws). */
async function ended<T>(t: Installed, span: Span, work: (span: SpanHandle) => Promise<T>): Promise<T> {
  try {
    return await work(handleOf(span));
  } catch (err) {
    throw failed(t, span, err);
  } finally {
    span.end();
  }
}

/**
 * Adds to the root span of the run in progress (a daemon run's `gatesync.run`, a command's
 * `gatesync.apply` …): what its validation, plan and apply counted, said where they count it,
 * for the daemon and the CLI alike. Nothing without tracing or outside a run.
 */
export function noteOnRun(attributes: Readonly<Record<string, AttributeValue | undefined>>): void {
  const t = installed;
  if (t === undefined) return;
  const root = t.api.context.active().getValue(t.rootKey) as Span | undefined;
  root?.setAttributes(safeAttributes(attributes));
}

/** A span's work that threw: the span's status says so (its message through the redaction layer, like any attribute); the error, to rethrow. */
function failed(t: Installed, span: Span, err: unknown): unknown {
  span.setStatus({ code: t.api.SpanStatusCode.ERROR, message: scrubText(err instanceof Error ? err.message : String(err)) });
  return err;
}

/** The context a W3C `traceparent` names (the active one when it is not a valid header). */
function parentContext(api: typeof OtelApi, traceparent: string): OtelApi.Context {
  return api.propagation.extract(api.context.active(), { traceparent }, api.defaultTextMapGetter);
}

/** `withSpan` for synchronous work (the pure planner). */
export function withSpanSync<T>(name: string, options: SpanOptions, work: (span: SpanHandle) => T): T {
  const t = installed;
  if (t === undefined) return work(noSpan);
  return t.tracer.startActiveSpan(name, { attributes: safeAttributes(options.attributes ?? {}) }, (span) => {
    try {
      return work(handleOf(span));
    } catch (err) {
      throw failed(t, span, err);
    } finally {
      span.end();
    }
  });
}
