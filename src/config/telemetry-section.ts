/** `telemetry:` of gatesync.yaml, the operator's (docs/user/telemetry.md): the same settings as the standard OTEL_* variables, which win when set. */

export type TraceSampler = "always_on" | "always_off" | "traceidratio" | "parentbased_always_on" | "parentbased_always_off" | "parentbased_traceidratio";

export interface TracesSettings {
  readonly exporter?: "otlp" | "none";
  readonly endpoint?: string;
  /** The variable holding the export headers (`key=value,…`). */
  readonly headersEnv?: string;
  readonly serviceName?: string;
  readonly sampler?: TraceSampler;
  readonly samplerArg?: number;
  readonly resourceAttributes?: Readonly<Record<string, string>>;
}

export interface TelemetryConfig {
  readonly traces?: TracesSettings;
}

/** The section as the schema let it through (checked before this runs). */
export function telemetryFromDocument(raw: unknown): TelemetryConfig {
  const traces = (raw as { traces?: TracesSettings } | null)?.traces;
  return traces === undefined ? {} : { traces };
}
