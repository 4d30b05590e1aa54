/**
 * What tracing is configured with: the standard OTEL_* variables, over the operator's
 * `telemetry.traces` of gatesync.yaml (config/telemetry-section.ts) for what they leave unset.
 * The SDK reads the variables itself; what only the file says is handed to it explicitly here.
 */
import type { TracesSettings } from "../config/telemetry-section.js";
import { registerSecret } from "../secrets/redaction.js";

type Env = Readonly<Record<string, string | undefined>>;

export interface TracingSettings {
  /** The collector's traces address, when the file gives it and no variable does. */
  readonly url?: string;
  /** The export headers, when the file's `headersEnv` names them and no variable gives them. */
  readonly headers?: Record<string, string>;
  /** The sampler the file names, when OTEL_TRACES_SAMPLER is unset. */
  readonly sampler?: { readonly name: NonNullable<TracesSettings["sampler"]>; readonly ratio: number };
  /** Resource attributes under OTEL_SERVICE_NAME and OTEL_RESOURCE_ATTRIBUTES (which win). */
  readonly resource: Readonly<Record<string, string>>;
}

const set = (value: string | undefined): boolean => value !== undefined && value.trim() !== "";

/** Whether traces are asked for: OTEL_TRACES_EXPORTER decides when set (otlp: on), else the file's exporter, else any endpoint. */
export function tracingConfigured(env: Env, file: TracesSettings | undefined): boolean {
  if (env.OTEL_SDK_DISABLED?.trim().toLowerCase() === "true") return false;
  if (set(env.OTEL_TRACES_EXPORTER)) return env.OTEL_TRACES_EXPORTER!.split(",").some((e) => e.trim().toLowerCase() === "otlp");
  if (file?.exporter !== undefined) return file.exporter === "otlp";
  return set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) || set(env.OTEL_EXPORTER_OTLP_ENDPOINT) || file?.endpoint !== undefined;
}

/** `key=value,…` (values percent-encoded), as OTEL_EXPORTER_OTLP_HEADERS writes them; each value is a secret. */
export function parseHeaders(text: string): Record<string, string> {
  const headers: Record<string, string> = {};
  for (const pair of text.split(",")) {
    const at = pair.indexOf("=");
    if (at <= 0) continue;
    const value = safeDecode(pair.slice(at + 1).trim());
    registerSecret(value);
    headers[pair.slice(0, at).trim()] = value;
  }
  return headers;
}

function safeDecode(text: string): string {
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

/** The settings the SDK is given explicitly: only what the file says and no variable overrides. */
export function tracingSettings(env: Env, file: TracesSettings | undefined, version: string): TracingSettings {
  const envHeaders = env.OTEL_EXPORTER_OTLP_TRACES_HEADERS ?? env.OTEL_EXPORTER_OTLP_HEADERS;
  // the variable's own values are secrets too (a collector's token): scrubbed wherever they would appear
  if (envHeaders !== undefined) parseHeaders(envHeaders);
  const fileHeaders = file?.headersEnv === undefined ? undefined : env[file.headersEnv];
  const endpointSet = set(env.OTEL_EXPORTER_OTLP_TRACES_ENDPOINT) || set(env.OTEL_EXPORTER_OTLP_ENDPOINT);
  return {
    ...(file?.endpoint === undefined || endpointSet ? {} : { url: `${file.endpoint.replace(/\/+$/, "")}/v1/traces` }),
    ...(envHeaders !== undefined || fileHeaders === undefined ? {} : { headers: parseHeaders(fileHeaders) }),
    ...(file?.sampler === undefined || set(env.OTEL_TRACES_SAMPLER) ? {} : { sampler: { name: file.sampler, ratio: file.samplerArg ?? 1 } }),
    resource: {
      "service.name": file?.serviceName ?? "gatesync",
      "service.version": version,
      ...(file?.resourceAttributes ?? {}),
    },
  };
}
