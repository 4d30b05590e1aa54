/**
 * Tracing with the OpenTelemetry SDK, configured the standard way (OTEL_TRACES_EXPORTER,
 * OTEL_EXPORTER_OTLP_ENDPOINT / _TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME,
 * OTEL_TRACES_SAMPLER(_ARG), OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_*: the SDK reads them).
 * Off unless an OTLP exporter is asked for; then the SDK is loaded with `import()`, spans leave
 * through the batch processor (bounded queue, dropped when full: a collector that is down or slow
 * costs bounded memory and no time on the run's path), and the flush at the end is bounded.
 */
import type * as SdkTraceBase from "@opentelemetry/sdk-trace-base";
import type { Sampler } from "@opentelemetry/sdk-trace-base";
import type { TracesSettings } from "../config/telemetry-section.js";
import { installTracer } from "./spans.js";
import { tracingConfigured, tracingSettings } from "./tracing-settings.js";
import type { TracingSettings } from "./tracing-settings.js";

/** The longest a command waits for its spans to leave at its end (a collector that hangs costs no more). */
export const flushBudgetMs = 2_000;

type Env = Readonly<Record<string, string | undefined>>;

export interface Tracing {
  /** Sends what is left, within `flushBudgetMs`, and stops the SDK. */
  shutdown(): Promise<void>;
}

const none: Tracing = { shutdown: async () => Promise.resolve() };

/** Starts the SDK when `env` or the file's `telemetry.traces` asks for it (tracing-settings.ts); its failures to start are said once, never thrown. */
export async function startTracing(env: Env, version: string, warn: (message: string) => void, file?: TracesSettings): Promise<Tracing> {
  if (!tracingConfigured(env, file)) return none;
  try {
    return await startSdk(env, tracingSettings(env, file, version), version);
  } catch (err) {
    warn(`tracing is off: the OpenTelemetry SDK did not start (${err instanceof Error ? err.message : String(err)})`);
    return none;
  }
}

/** The file's sampler, as OTEL_TRACES_SAMPLER would make it. */
function samplerOf(base: typeof SdkTraceBase, spec: NonNullable<TracingSettings["sampler"]>): Sampler {
  const name = spec.name;
  const root = name.endsWith("always_off")
    ? new base.AlwaysOffSampler()
    : name.endsWith("traceidratio")
      ? new base.TraceIdRatioBasedSampler(spec.ratio)
      : new base.AlwaysOnSampler();
  return name.startsWith("parentbased_") ? new base.ParentBasedSampler({ root }) : root;
}

async function startSdk(env: Env, settings: TracingSettings, version: string): Promise<Tracing> {
  const api = await import("@opentelemetry/api");
  const { NodeTracerProvider } = await import("@opentelemetry/sdk-trace-node");
  const base = await import("@opentelemetry/sdk-trace-base");
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
  const { resourceFromAttributes, detectResources, envDetector } = await import("@opentelemetry/resources");
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over the file's and gatesync's own
  const resource = resourceFromAttributes(settings.resource).merge(detectResources({ detectors: [envDetector] }));
  // a call to the collector may take no longer than the flush at the end waits, unless the operator says otherwise
  const timeoutSet = (env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? env.OTEL_EXPORTER_OTLP_TIMEOUT) !== undefined;
  const exporter = new OTLPTraceExporter({
    ...(timeoutSet ? {} : { timeoutMillis: flushBudgetMs }),
    ...(settings.url === undefined ? {} : { url: settings.url }),
    ...(settings.headers === undefined ? {} : { headers: settings.headers }),
  });
  const sampler = settings.sampler === undefined ? {} : { sampler: samplerOf(base, settings.sampler) };
  const provider = new NodeTracerProvider({ resource, ...sampler, spanProcessors: [new base.BatchSpanProcessor(exporter, batchLimits(env))] });
  // the W3C propagator (traceparent), and no context manager: spans.ts knows parents by the run's shape
  provider.register({ contextManager: null });
  installTracer({ api, tracer: provider.getTracer("gatesync", version) });
  return {
    async shutdown() {
      installTracer(undefined);
      await bounded(provider.shutdown(), flushBudgetMs);
      // the globals `register` set, released: a daemon rebuilt with new settings starts the SDK anew
      api.trace.disable();
      api.context.disable();
      api.propagation.disable();
    },
  };
}

/**
 * The batch processor's limits where OTEL_BSP_* leave them unset. An export serializes its spans
 * on the process's one thread (some 9 µs a span): in batches of 2,048 (the SDK's 512 would
 * export twice during an apply of 1,000 direct changes) they leave with the 5 s timer,
 * after such an apply rather than inside it. The queue, 4,096 spans, bounds the memory a
 * collector that is down costs (some 8 MB); beyond it spans are dropped.
 */
function batchLimits(env: Env): { maxExportBatchSize?: number; maxQueueSize?: number } {
  return {
    ...(env.OTEL_BSP_MAX_EXPORT_BATCH_SIZE === undefined ? { maxExportBatchSize: 2_048 } : {}),
    ...(env.OTEL_BSP_MAX_QUEUE_SIZE === undefined ? { maxQueueSize: 4_096 } : {}),
  };
}

/** Waits for `work` at most `ms` (its failure ignored: an exporter's error never touches a run). */
async function bounded(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const budget = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms).unref()));
  await Promise.race([work.catch(() => undefined), budget]);
  clearTimeout(timer);
}
