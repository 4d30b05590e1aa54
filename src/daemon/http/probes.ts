/** The open routes: liveness, readiness and the Prometheus metrics. */
import type { Reply } from "../../http/http-io.js";
import type { RouteRequest } from "./served.js";

/** Alive, unless a validation has run past its limit (a rule or a check that never returns: the daemon serves, but applies nothing). */
export function health(r: RouteRequest): Reply {
  const overdue = r.served.opts.reconciler.validationOverdue;
  if (overdue === undefined) return { status: 200, body: { status: "ok" } };
  const seconds = (ms: number): number => Math.round(ms / 1000);
  return {
    status: 503,
    body: { status: "stuck", reason: `a validation has run for ${seconds(overdue.forMs)} s, past its limit of ${seconds(overdue.limitMs)} s` },
  };
}

/**
 * Ready means serving (a standby serves status and metrics, and takes over when elected);
 * whether the repository is applied is `synced` (in /status and gatesync_synced).
 */
export function ready(r: RouteRequest): Reply {
  const { reconciler, role } = r.served.opts;
  return reconciler.isStopping
    ? { status: 503, body: { status: "not ready", reason: "stopping" } }
    : { status: 200, body: { status: "ready", role: role?.() ?? "single", synced: reconciler.synced } };
}

export async function metrics(r: RouteRequest): Promise<Reply> {
  const registry = r.served.opts.metrics.registry;
  return { status: 200, raw: Buffer.from(await registry.metrics()), headers: { "content-type": registry.contentType } };
}
