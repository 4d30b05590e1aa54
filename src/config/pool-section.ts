/**
 * `state.pool` in gatesync.yaml: the connections a process keeps to a PostgreSQL state's database
 * (src/record/postgres/shared-pool.ts), shared by every environment's state, history and views,
 * and how long one waits for a connection. The operator's, one for the whole daemon: at the top
 * level's PostgreSQL state only (an environment's own is refused, as `lease` is).
 */
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { formatPath } from "../text/field-path.js";
import type { PathSegment } from "../text/field-path.js";
import { parseDuration } from "./duration.js";

export interface PoolConfig {
  /** Connections of the pool at most (the fleet's lease connection is one more). */
  readonly size: number;
  /** How long a wait for a connection lasts before STATE_POOL_TIMEOUT. */
  readonly acquireMs: number;
}

export const poolDefaults: PoolConfig = { size: 4, acquireMs: 10_000 };

type Raw = Record<string, unknown>;

/** `{ pool }` when the state section sets `pool`, else nothing (the defaults apply). */
export function poolSetting(pool: unknown): { readonly pool?: PoolConfig } {
  if (pool === undefined || pool === null || typeof pool !== "object") return {};
  const p = pool as Raw;
  return {
    pool: {
      size: typeof p.size === "number" ? p.size : poolDefaults.size,
      acquireMs: typeof p.acquireTimeout === "string" ? parseDuration(p.acquireTimeout) : poolDefaults.acquireMs,
    },
  };
}

/** `state.pool` refused in an environment's own state: one pool serves them all. */
export function poolProblems(doc: Raw, file: string, locate: (p: readonly PathSegment[]) => { line?: number; column?: number }): Diagnostic[] {
  const environments = doc.environments !== null && typeof doc.environments === "object" ? (doc.environments as Raw) : {};
  const out: Diagnostic[] = [];
  for (const [name, e] of Object.entries(environments)) {
    const own = ((e ?? {}) as Raw).state as Raw | undefined;
    if (own?.pool === undefined) continue;
    const p: PathSegment[] = ["environments", name, "state", "pool"];
    out.push({
      severity: "error",
      code: ErrorCode.CONFIG_INVALID,
      file,
      path: formatPath(p),
      ...locate(p),
      message: `environment ${name} sets a connection pool of its own`,
      hint: "every environment's state shares the process's one pool per database: move `pool:` to the top-level `state:`",
    });
  }
  return out;
}
