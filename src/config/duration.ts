/** A duration as gatesync.yaml writes it (`500ms`, `30s`, `1m`, `2h`, `30d`), in milliseconds. */
import { ConfigError, ErrorCode } from "../errors.js";

export function parseDuration(text: string): number {
  const m = /^(\d+)(ms|s|m|h|d)$/.exec(text);
  if (m === null) throw new ConfigError(ErrorCode.CONFIG_INVALID, `bad duration ${JSON.stringify(text)}`, { hint: "use e.g. 500ms, 30s, 1m, 2h, 30d" });
  const n = Number(m[1]);
  const unit = { ms: 1, s: 1000, m: 60_000, h: 3_600_000, d: 86_400_000 }[m[2] as "ms" | "s" | "m" | "h" | "d"];
  return n * unit;
}
