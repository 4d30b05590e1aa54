/**
 * pino loggers: JSON lines with static messages and data in fields. Secret-bearing fields are
 * redacted by path wherever they appear; values are never interpolated into messages. Every
 * line then passes through the redaction layer (one stream-write hook), so a secret value
 * that reached any field — a server's echo, git's output, an error message — is scrubbed.
 */
import { pino } from "pino";
import type { DestinationStream, Logger, LoggerOptions } from "pino";
import { UsageError } from "./errors.js";
import { scrubText } from "./secrets/redaction.js";

export type { Logger } from "pino";

/** Field names whose values are never written, at any depth we can name. */
export const redactedKeys = [
  "authorization",
  "Authorization",
  "x-gw-authorization",
  "X-GW-Authorization",
  "secret",
  "token",
  "password",
  "credential",
  "hmac_string",
  "header_map",
  "basic_auth_data",
  "jwt_data",
  "oauth_keys",
];

/** Each key at the top level and up to three levels down (pino's redaction takes explicit paths). */
function redactPaths(): string[] {
  return redactedKeys.flatMap((k) => {
    const seg = /^[A-Za-z_$][\w$]*$/.test(k) ? `.${k}` : `["${k}"]`;
    const top = seg.startsWith(".") ? k : seg;
    return [top, `*${seg}`, `*.*${seg}`, `*.*.*${seg}`];
  });
}

export interface LoggerSettings {
  readonly level?: string;
  /** Human-readable output (pino-pretty) instead of JSON. */
  readonly pretty?: boolean;
  readonly destination?: DestinationStream;
}

export function createLogger(settings: LoggerSettings = {}): Logger {
  const level = settings.level ?? process.env.GATESYNC_LOG_LEVEL ?? "info";
  if (level !== "silent" && !(level in pino.levels.values)) {
    throw new UsageError(
      `GATESYNC_LOG_LEVEL is ${JSON.stringify(level)}, which is not a log level`,
      `use one of ${[...Object.keys(pino.levels.values), "silent"].join(", ")}`,
    );
  }
  const options: LoggerOptions = {
    level,
    base: { service: "gatesync" },
    redact: { paths: redactPaths(), censor: "[redacted]" },
    timestamp: pino.stdTimeFunctions.isoTime,
    hooks: { streamWrite: scrubText },
  };
  if (settings.destination !== undefined) return pino(options, settings.destination);
  if (settings.pretty === true) {
    return pino({ ...options, transport: { target: "pino-pretty", options: { destination: 2, translateTime: "SYS:HH:MM:ss" } } });
  }
  return pino(options, pino.destination({ dest: 2, sync: false }));
}

/** A logger that writes nothing (tests, library use). */
export function silentLogger(): Logger {
  return pino({ level: "silent" });
}
