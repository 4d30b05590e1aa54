/**
 * `state.lease` in gatesync.yaml: how long a fleet's lease of an environment lasts and how often
 * it is renewed (docs/user/fleets.md). The operator's setting, one for the whole fleet: at the
 * top level's PostgreSQL state only, never an environment's, never the repository's.
 *
 * At least three renewals per lease (`renewEvery` at most a third of `duration`): a renewal that
 * fails is retried before the lease is lost, and a leader stops sending a margin before its
 * lease's end (src/fleet/lease-session.ts). What the schema cannot say is checked here, located
 * at the setting.
 */
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { formatPath } from "../text/field-path.js";
import type { PathSegment } from "../text/field-path.js";
import { parseDuration } from "./duration.js";

export interface LeaseConfig {
  /** How long a lease lasts without renewal. */
  readonly durationMs: number;
  /** How often the leases are renewed. */
  readonly renewMs: number;
}

export const leaseDefaults: LeaseConfig = { durationMs: 5_000, renewMs: 1_000 };
/** Shorter leases than this would be lost to an ordinary pause of the database or the network. */
export const minLeaseMs = 1_000;
export const minRenewMs = 100;
/** Renewals per lease, at least. */
export const renewalsPerLease = 3;

type Raw = Record<string, unknown>;

/** The lease times of a PostgreSQL state section (`state.lease`), the defaults where absent. */
export function leaseConfig(lease: unknown): LeaseConfig {
  const l = (lease ?? {}) as Raw;
  return {
    durationMs: typeof l.duration === "string" ? parseDuration(l.duration) : leaseDefaults.durationMs,
    renewMs: typeof l.renewEvery === "string" ? parseDuration(l.renewEvery) : leaseDefaults.renewMs,
  };
}

/** `{ lease }` when the state section sets `lease`, else nothing (the fleet's defaults apply). */
export function leaseSetting(lease: unknown): { readonly lease?: LeaseConfig } {
  return lease === undefined ? {} : { lease: leaseConfig(lease) };
}

const shown = (ms: number): string => (ms % 1000 === 0 ? `${ms / 1000}s` : `${ms}ms`);

/** What is wrong with lease times `l` (empty when nothing). */
export function leaseTimeProblems(l: LeaseConfig): Array<{ readonly key: "duration" | "renewEvery"; readonly message: string; readonly hint: string }> {
  if (l.durationMs < minLeaseMs)
    return [
      {
        key: "duration",
        message: `a lease of ${shown(l.durationMs)} is shorter than ${shown(minLeaseMs)}`,
        hint: `set \`duration: ${shown(minLeaseMs)}\` or more (the default is 5s)`,
      },
    ];
  if (l.renewMs < minRenewMs)
    return [
      {
        key: "renewEvery",
        message: `renewing every ${shown(l.renewMs)} is more often than every ${shown(minRenewMs)}`,
        hint: `set \`renewEvery: ${shown(minRenewMs)}\` or more`,
      },
    ];
  if (l.renewMs * renewalsPerLease > l.durationMs) {
    const most = Math.floor(l.durationMs / renewalsPerLease);
    return [
      {
        key: "renewEvery",
        message: `renewing every ${shown(l.renewMs)} is less than ${renewalsPerLease} renewals per lease of ${shown(l.durationMs)}: one slow renewal would lose the lease`,
        hint: `set \`renewEvery: ${shown(most)}\` or less, or \`duration: ${shown(l.renewMs * renewalsPerLease)}\` or more`,
      },
    ];
  }
  return [];
}

/** `state.lease` checked (the top level's), and refused in an environment's own state. */
export function leaseProblems(doc: Raw, file: string, locate: (p: readonly PathSegment[]) => { line?: number; column?: number }): Diagnostic[] {
  const problem = (p: PathSegment[], message: string, hint: string): Diagnostic => ({
    severity: "error",
    code: ErrorCode.CONFIG_INVALID,
    file,
    path: formatPath(p),
    ...locate(p),
    message,
    hint,
  });
  const out: Diagnostic[] = [];
  const state = (doc.state ?? {}) as Raw;
  if (state.lease !== undefined) {
    for (const p of leaseTimeProblems(leaseConfig(state.lease))) out.push(problem(["state", "lease", p.key], p.message, p.hint));
  }
  const environments = doc.environments !== null && typeof doc.environments === "object" ? (doc.environments as Raw) : {};
  for (const [name, e] of Object.entries(environments)) {
    const own = ((e ?? {}) as Raw).state as Raw | undefined;
    if (own?.lease !== undefined)
      out.push(
        problem(
          ["environments", name, "state", "lease"],
          `environment ${name} sets lease times of its own`,
          "the fleet's lease times are one setting for every environment: move `lease:` to the top-level `state:`",
        ),
      );
  }
  return out;
}
