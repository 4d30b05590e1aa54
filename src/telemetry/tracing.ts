/**
 * Tracing with the OpenTelemetry SDK, configured the standard way (OTEL_TRACES_EXPORTER,
 * OTEL_EXPORTER_OTLP_ENDPOINT / _TRACES_ENDPOINT, OTEL_EXPORTER_OTLP_HEADERS, OTEL_SERVICE_NAME,
 * OTEL_TRACES_SAMPLER(_ARG), OTEL_RESOURCE_ATTRIBUTES, OTEL_BSP_*: the SDK reads them).
 * Off unless an OTLP exporter is asked for; then the SDK is loaded with `import()`, spans leave
 * through the batch processor (bounded queue, dropped when full: a collector that is down or slow
 * costs bounded memory and no time on the run's path), and the flush at the end is bounded.
 */
import { installTracer } from "./spans.js";

/** The longest a command waits for its spans to leave at its end (a collector that hangs costs no more). */
export const flushBudgetMs = 2_000;

type Env = Readonly<Record<string, string | undefined>>;

/** Whether the environment asks for traces: OTEL_TRACES_EXPORTER=otlp, or an OTLP endpoint without OTEL_TRACES_EXPORTER. */
export function tracingConfigured(env: Env): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  const exporters = env.OTEL_TRACES_EXPORTER?.split(",").map((e) => e.trim().toLowerCase());
  if (exporters !== undefined && exporters.length > 0 && exporters[0] !== "") return exporters.includes("otlp");
  return (env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT ?? env.OTEL_EXPORTER_OTLP_ENDPOINT ?? "") !== "";
}

export interface Tracing {
  /** Sends what is left, within `flushBudgetMs`, and stops the SDK. */
  shutdown(): Promise<void>;
}

const none: Tracing = { shutdown: async () => Promise.resolve() };

/** Starts the SDK when `env` asks for it (see tracingConfigured); its failures to start are said once, never thrown. */
export async function startTracing(env: Env, version: string, warn: (message: string) => void): Promise<Tracing> {
  if (!tracingConfigured(env)) return none;
  try {
    return await startSdk(env, version);
  } catch (err) {
    warn(`tracing is off: the OpenTelemetry SDK did not start (${err instanceof Error ? err.message : String(err)})`);
    return none;
  }
}

async function startSdk(env: Env, version: string): Promise<Tracing> {
  const api = await import("@opentelemetry/api");
  const { NodeTracerProvider } = await import("@opentelemetry/sdk-trace-node");
  const { BatchSpanProcessor } = await import("@opentelemetry/sdk-trace-base");
  const { OTLPTraceExporter } = await import("@opentelemetry/exporter-trace-otlp-http");
  const { resourceFromAttributes, detectResources, envDetector } = await import("@opentelemetry/resources");
  const { ATTR_SERVICE_NAME, ATTR_SERVICE_VERSION } = await import("@opentelemetry/semantic-conventions");
  // OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (the env detector) win over gatesync's own
  const resource = resourceFromAttributes({ [ATTR_SERVICE_NAME]: "gatesync", [ATTR_SERVICE_VERSION]: version }).merge(
    detectResources({ detectors: [envDetector] }),
  );
  // a call to the collector may take no longer than the flush at the end waits, unless the operator says otherwise
  const timeoutSet = (env.OTEL_EXPORTER_OTLP_TRACES_TIMEOUT ?? env.OTEL_EXPORTER_OTLP_TIMEOUT) !== undefined;
  const exporter = new OTLPTraceExporter(timeoutSet ? {} : { timeoutMillis: flushBudgetMs });
  const provider = new NodeTracerProvider({ resource, spanProcessors: [new BatchSpanProcessor(exporter)] });
  // the global context manager and the W3C propagator (traceparent): what `withSpan` parents spans with
  provider.register();
  installTracer({ api, tracer: provider.getTracer("gatesync", version) });
  return {
    async shutdown() {
      installTracer(undefined);
      await bounded(provider.shutdown(), flushBudgetMs);
    },
  };
}

/** Waits for `work` at most `ms` (its failure ignored: an exporter's error never touches a run). */
async function bounded(work: Promise<unknown>, ms: number): Promise<void> {
  let timer: NodeJS.Timeout | undefined;
  const budget = new Promise<void>((resolve) => (timer = setTimeout(resolve, ms).unref()));
  await Promise.race([work.catch(() => undefined), budget]);
  clearTimeout(timer);
}
