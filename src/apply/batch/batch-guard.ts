/**
 * Defence in depth behind validation's refusal (validate/batch-route-check.ts): a batch is sent
 * only through a route whose loopback API this run does not change. From the first wave holding
 * a change that may change it — one that claims the route, or, the loopback API's id not being
 * configured, one whose spec gives no listen path — every batchable call of the run goes directly.
 */
import type { GatesyncConfig } from "../../config/config.js";
import { batchRouteOf } from "../../config/environments.js";
import type { ReservedBatchRoute } from "../../kinds/kind.js";
import type { KindModule, Spec } from "../../kinds/kind.js";
import { knownKind } from "../../kinds/registry.js";
import type { Resource } from "../../kinds/resource.js";
import { resourceId } from "../../kinds/resource.js";
import type { PlannedChange } from "../../plan/plan-change.js";
import type { ResourceRecord } from "../../record/state.js";

/** The first wave whose calls go directly, and why (for the summary). */
export interface RouteGuard {
  readonly fromWave: number;
  readonly reason: string;
}

type RouteHook = NonNullable<KindModule["batchRoute"]>;

/** The spec a change sends: its resource's, or an orphan's last applied one (with its recorded address). */
function specOf(c: PlannedChange, resources: ReadonlyMap<string, Resource>, record: (id: string) => ResourceRecord | undefined): Spec | undefined {
  const resource = resources.get(c.id);
  if (resource !== undefined) return resource.spec.read();
  const recorded = record(c.id);
  const applied = recorded?.applied?.read() as Spec | undefined;
  return applied === undefined ? undefined : { ...applied, apiId: recorded?.address.apiID };
}

function why(c: PlannedChange, spec: Spec | undefined, hook: RouteHook, route: ReservedBatchRoute): string {
  const claim = spec === undefined ? undefined : hook.claims(spec, route)[0];
  return claim !== undefined
    ? `${c.id} changes the batch route's loopback API (${claim.message})`
    : `${c.id} gives no listen path, so it may patch the batch route's loopback API (${route.setting}.apiId is not set: set it to the loopback API's id to keep such changes batched)`;
}

/** The guard of this run's changes (undefined: nothing may change the route, or nothing is batched). */
export function batchRouteGuard(
  executable: readonly PlannedChange[],
  resources: readonly Resource[],
  record: (id: string) => ResourceRecord | undefined,
  config: GatesyncConfig,
): RouteGuard | undefined {
  const route = batchRouteOf(config).batchRoute;
  if (route === undefined) return undefined;
  const byId = new Map(resources.map((r) => [resourceId(r), r]));
  let first: { change: PlannedChange; spec: Spec | undefined; hook: RouteHook } | undefined;
  for (const c of executable) {
    const hook = knownKind(c.kind)?.batchRoute;
    if (hook === undefined || (first !== undefined && c.wave >= first.change.wave)) continue;
    const spec = specOf(c, byId, record);
    if (spec === undefined || hook.mayChange(spec, route)) first = { change: c, spec, hook };
  }
  return first === undefined ? undefined : { fromWave: first.change.wave, reason: why(first.change, first.spec, first.hook, route) };
}
