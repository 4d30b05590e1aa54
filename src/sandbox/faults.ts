/**
 * Faults on demand: latency (fixed + jitter), a share of 500 and of 503 + Retry-After answers,
 * connection resets before processing, answers lost after processing, and a token bucket per
 * interface answering 429 + Retry-After. Random choices come from a seeded generator so a
 * test can replay them.
 */
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import type { RandomGenerator } from "pure-rand/types/RandomGenerator";
import type { InterfaceName } from "../contract/operations.js";

export const interfaceNames: readonly InterfaceName[] = ["gateway", "portal", "dashboard", "llm"];

export interface RateLimit {
  readonly requestsPerSecond: number;
  /** Bucket size: requests that may arrive at once. */
  readonly burst: number;
}

export interface FaultSettings {
  readonly latencyMs: number;
  readonly jitterMs: number;
  /** Share (0–1) of requests answered 500 before anything is processed. */
  readonly errorRate: number;
  /** Share answered 503 with Retry-After before anything is processed. */
  readonly unavailableRate: number;
  /** Share whose connection is reset before anything is processed. */
  readonly resetRate: number;
  /** Share that is processed, then has its connection reset: the answer is lost. */
  readonly lostResponseRate: number;
  /** Token bucket per interface; undefined: no limit. */
  readonly rateLimit: RateLimit | undefined;
  /** Interfaces the faults apply to. */
  readonly interfaces: readonly InterfaceName[];
  /**
   * Which requests resets, errors and lost answers hit: clients' calls (`external`), batch
   * sub-requests the gateway sends itself (`internal`), or both. The rate limit and latency
   * always apply to clients' calls only.
   */
  readonly scope: "all" | "external" | "internal";
}

export const noFaults: FaultSettings = {
  latencyMs: 0,
  jitterMs: 0,
  errorRate: 0,
  unavailableRate: 0,
  resetRate: 0,
  lostResponseRate: 0,
  rateLimit: undefined,
  interfaces: interfaceNames,
  scope: "all",
};

export type Verdict =
  | { readonly kind: "pass"; readonly lostResponse: boolean; readonly delayMs: number }
  | { readonly kind: "throttled"; readonly retryAfterSeconds: number }
  | { readonly kind: "reset" }
  | { readonly kind: "error" }
  | { readonly kind: "unavailable"; readonly retryAfterSeconds: number };

class TokenBucket {
  private tokens: number;
  private last: number;

  constructor(
    private readonly limit: RateLimit,
    private readonly now: () => number,
  ) {
    this.tokens = limit.burst;
    this.last = now();
  }

  /** Takes a token, or says in how many seconds one will be there. */
  take(): number | undefined {
    const t = this.now();
    this.tokens = Math.min(this.limit.burst, this.tokens + ((t - this.last) / 1000) * this.limit.requestsPerSecond);
    this.last = t;
    if (this.tokens >= 1) {
      this.tokens -= 1;
      return undefined;
    }
    return Math.max(1, Math.ceil((1 - this.tokens) / this.limit.requestsPerSecond));
  }
}

export class FaultInjector {
  private settings: FaultSettings;
  private rng: RandomGenerator;
  private buckets = new Map<InterfaceName, TokenBucket>();
  readonly injected = { throttled: 0, reset: 0, error: 0, unavailable: 0, lostResponse: 0 };

  constructor(
    settings: Partial<FaultSettings> = {},
    seed = 1,
    private readonly now: () => number = () => Date.now(),
  ) {
    this.settings = { ...noFaults, ...settings };
    this.rng = xoroshiro128plus(seed);
  }

  current(): FaultSettings {
    return this.settings;
  }

  update(change: Partial<FaultSettings> & { seed?: number }): FaultSettings {
    const { seed, ...rest } = change;
    this.settings = { ...this.settings, ...rest };
    if (seed !== undefined) this.rng = xoroshiro128plus(seed);
    if ("rateLimit" in rest) this.buckets = new Map();
    return this.settings;
  }

  private chance(p: number): boolean {
    return p > 0 && uniformFloat64(this.rng) < p;
  }

  /**
   * The fate of one request. `external`: sent by a client (not a batch sub-request), so the
   * rate limit and latency apply; resets and errors apply to both.
   */
  decide(iface: InterfaceName, external: boolean): Verdict {
    const s = this.settings;
    if (!s.interfaces.includes(iface)) return { kind: "pass", lostResponse: false, delayMs: 0 };
    if (external && s.rateLimit !== undefined) {
      let bucket = this.buckets.get(iface);
      if (bucket === undefined) this.buckets.set(iface, (bucket = new TokenBucket(s.rateLimit, this.now)));
      const wait = bucket.take();
      if (wait !== undefined) {
        this.injected.throttled++;
        return { kind: "throttled", retryAfterSeconds: wait };
      }
    }
    const inScope = s.scope === "all" || (s.scope === "external") === external;
    if (!inScope) return { kind: "pass", lostResponse: false, delayMs: external ? this.delay() : 0 };
    if (this.chance(s.resetRate)) {
      this.injected.reset++;
      return { kind: "reset" };
    }
    if (this.chance(s.errorRate)) {
      this.injected.error++;
      return { kind: "error" };
    }
    if (this.chance(s.unavailableRate)) {
      this.injected.unavailable++;
      return { kind: "unavailable", retryAfterSeconds: 1 };
    }
    const lostResponse = this.chance(s.lostResponseRate);
    if (lostResponse) this.injected.lostResponse++;
    return { kind: "pass", lostResponse, delayMs: external ? this.delay() : 0 };
  }

  private delay(): number {
    const s = this.settings;
    return s.latencyMs + (s.jitterMs > 0 ? uniformFloat64(this.rng) * s.jitterMs : 0);
  }
}

const rateFields = ["errorRate", "unavailableRate", "resetRate", "lostResponseRate"];

/** What is wrong with a (partial) change of the fault settings sent to the inspection interface, if anything. */
export function faultProblem(change: Record<string, unknown>): string | undefined {
  const known = ["latencyMs", "jitterMs", ...rateFields, "rateLimit", "interfaces", "scope", "seed"];
  for (const [k, v] of Object.entries(change)) {
    if (!known.includes(k)) return `unknown fault setting ${k}; known: ${known.join(", ")}`;
    if (rateFields.includes(k) && (typeof v !== "number" || v < 0 || v > 1)) return `${k} must be a number from 0 to 1`;
    if ((k === "latencyMs" || k === "jitterMs" || k === "seed") && (typeof v !== "number" || v < 0)) return `${k} must be a number, 0 or more`;
    if (k === "rateLimit" && v !== null && v !== undefined && !isRateLimit(v)) return "rateLimit must be {requestsPerSecond > 0, burst >= 1} or null";
    if (k === "scope" && !["all", "external", "internal"].includes(v as string)) return "scope must be all, external or internal";
    if (k === "interfaces" && !(Array.isArray(v) && v.every((i) => (interfaceNames as readonly unknown[]).includes(i))))
      return "interfaces must list gateway, portal, dashboard or llm";
  }
  if (change.rateLimit === null) change.rateLimit = undefined;
  return undefined;
}

function isRateLimit(v: unknown): boolean {
  if (v === null || typeof v !== "object") return false;
  const { requestsPerSecond, burst } = v as Record<string, unknown>;
  return typeof requestsPerSecond === "number" && requestsPerSecond > 0 && typeof burst === "number" && burst >= 1;
}
