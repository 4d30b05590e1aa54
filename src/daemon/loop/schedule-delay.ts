/** When a reconcile loop runs next: its schedule's interval with jitter, sooner after failures (backing off up to the interval). */
import type { GatesyncConfig } from "../../config/config.js";

export function scheduleDelay(
  schedule: Pick<GatesyncConfig["schedule"], "intervalMs" | "jitter">,
  consecutiveFailures: number,
  opts: { readonly random?: () => number; readonly retryBaseMs?: number },
): number {
  const { intervalMs, jitter } = schedule;
  const random = opts.random ?? Math.random;
  const base = consecutiveFailures === 0 ? intervalMs : Math.min(intervalMs, (opts.retryBaseMs ?? 5_000) * 2 ** (consecutiveFailures - 1));
  return Math.max(0, Math.round(base * (1 + jitter * (2 * random() - 1))));
}
