/** Builds a plan's scope from the validated resources, the state and the selection asked for. */
import { kindModule, providedApiIds } from "../kinds/registry.js";
import type { Resource } from "../kinds/resource.js";
import { resourceId } from "../kinds/resource.js";
import type { PlanScope } from "./plan.js";
import type { StateSnapshot } from "../record/state.js";
import type { Scope, SelectionItem } from "../select/selection.js";
import { selectResources } from "../select/selection.js";

export function selectionItem(r: Resource): SelectionItem {
  return {
    id: resourceId(r),
    kind: r.kind,
    labels: r.labels,
    dependsOn: kindModule(r.kind)
      .references(r.spec.read())
      .map((ref) => `${ref.kind}/${ref.name}`),
  };
}

/** The plan scope and the ids to prepare. */
export function planScope(
  resources: readonly Resource[],
  state: StateSnapshot,
  scope: Scope,
  configSelector: string | undefined,
): { readonly plan: PlanScope; readonly only: ReadonlySet<string> } {
  const items = resources.map(selectionItem);
  const present = new Set(items.map((i) => i.id));
  const result = selectResources(items, new Set(state.resources.keys()), scope);
  const summary = { ...result.summary(state.resources.values(), present), ...(configSelector === undefined ? {} : { configSelector }) };
  return { plan: { present, includesRecord: result.includesRecord, summary, declaredObjects: declaredObjects(resources) }, only: result.selected };
}

/**
 * The objects the repository's deactivatable resources address, by the kind's identity of
 * the spec (for those kinds the same string as the address key of their requests and
 * records: `api:<apiId>`, `org-key:<keyId>`) — no secret is resolved for it.
 */
function declaredObjects(resources: readonly Resource[]): Map<string, string> {
  const apis = providedApiIds(resources);
  const keys = new Map<string, string>();
  for (const r of resources) {
    const kind = kindModule(r.kind);
    if (kind.deactivation === undefined) continue;
    const key = kind.identity(r.spec.read(), (name) => apis.get(name));
    if (key !== undefined && !keys.has(key)) keys.set(key, resourceId(r));
  }
  return keys;
}
