/** When to try a call again, and how long to wait: pure functions. */
import type { CallOutcome } from "../http-client.js";

export interface RetryPolicy {
  readonly max: number;
  readonly baseDelayMs: number;
  readonly maxDelayMs: number;
}

/** Exponential backoff with full jitter: a random wait up to base·2^attempt, capped. */
export function backoffMs(policy: RetryPolicy, attempt: number, random: () => number = Math.random): number {
  const ceiling = Math.min(policy.maxDelayMs, policy.baseDelayMs * 2 ** attempt);
  return Math.floor(random() * ceiling);
}

/**
 * How long the whole interface must wait after this outcome: a 429, or a 503 with Retry-After,
 * says the server is not taking requests (Retry-After, or a backoff when it gives none). The
 * pause holds whatever becomes of the call that met it — even one that gives up.
 */
export function throttlePauseMs(outcome: CallOutcome, policy: RetryPolicy, attempt: number, random?: () => number): number | undefined {
  if (outcome.kind !== "answered") return undefined;
  if (outcome.status !== 429 && !(outcome.status === 503 && outcome.retryAfterMs !== undefined)) return undefined;
  return outcome.retryAfterMs ?? backoffMs(policy, attempt, random);
}

export type Verdict =
  /** `note`: what the record says about how it succeeded, when the answer alone does not. */
  | { readonly kind: "success"; readonly note?: string }
  /** Try again after `delayMs` (0: as the queue allows). `pause`: the whole interface waits. */
  | { readonly kind: "retry"; readonly delayMs: number; readonly pause: boolean; readonly why: string }
  | { readonly kind: "failed"; readonly why: string; readonly status?: number }
  /** The request may have changed the server: never sent again automatically. */
  | { readonly kind: "in-doubt"; readonly why: string };

/**
 * The fate of one outcome. `repeatable`: sending it twice equals sending it once (operations
 * 1, 2, 3, 7, 8 — an org key write carrying a quota reset excepted).
 */
export function judge(
  outcome: CallOutcome,
  repeatable: boolean,
  attempt: number,
  policy: RetryPolicy,
  describe: (o: Extract<CallOutcome, { kind: "answered" }>) => string,
  random?: () => number,
): Verdict {
  const exhausted = attempt >= policy.max;
  if (outcome.kind === "answered") {
    const { status } = outcome;
    if (status >= 200 && status < 300) return { kind: "success" };
    const why = `${status}: ${describe(outcome)}`;
    // 429, and 503 with Retry-After, say the request was not processed.
    const pauseMs = throttlePauseMs(outcome, policy, attempt, random);
    if (pauseMs !== undefined) {
      return exhausted ? { kind: "failed", why: `${why} (gave up after ${attempt + 1} tries)`, status } : { kind: "retry", delayMs: pauseMs, pause: true, why };
    }
    if (status >= 500) {
      if (!repeatable) return { kind: "in-doubt", why };
      return exhausted
        ? { kind: "failed", why: `${why} (gave up after ${attempt + 1} tries)`, status }
        : { kind: "retry", delayMs: backoffMs(policy, attempt, random), pause: false, why };
    }
    return { kind: "failed", why, status };
  }
  if (outcome.kind === "not-sent") {
    return exhausted
      ? { kind: "failed", why: `${outcome.error} (gave up after ${attempt + 1} tries)` }
      : { kind: "retry", delayMs: backoffMs(policy, attempt, random), pause: false, why: outcome.error };
  }
  if (!repeatable) return { kind: "in-doubt", why: outcome.error };
  return exhausted
    ? { kind: "failed", why: `${outcome.error} (outcome unknown after ${attempt + 1} tries)` }
    : { kind: "retry", delayMs: backoffMs(policy, attempt, random), pause: false, why: outcome.error };
}
