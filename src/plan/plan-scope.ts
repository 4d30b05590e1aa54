/** Builds a plan's scope from the validated resources, the state and the selection asked for. */
import { kindModule } from "../kinds/registry.js";
import type { Resource } from "../kinds/resource.js";
import { resourceId } from "../kinds/resource.js";
import type { PlanScope } from "./plan.js";
import type { StateSnapshot } from "../record/state.js";
import type { Scope, SelectionItem } from "../select/selection.js";
import { selectResources } from "../select/selection.js";

export function selectionItem(r: Resource): SelectionItem {
  return { id: resourceId(r), kind: r.kind, labels: r.labels, dependsOn: kindModule(r.kind).references(r.spec).map((ref) => `${ref.kind}/${ref.name}`) };
}

/** The plan scope and the ids to prepare. */
export function planScope(resources: readonly Resource[], state: StateSnapshot, scope: Scope, configSelector: string | undefined): { readonly plan: PlanScope; readonly only: ReadonlySet<string> } {
  const items = resources.map(selectionItem);
  const present = new Set(items.map((i) => i.id));
  const result = selectResources(items, new Set(state.resources.keys()), scope);
  const summary = { ...result.summary(state.resources.values(), present), ...(configSelector === undefined ? {} : { configSelector }) };
  return { plan: { present, includesRecord: result.includesRecord, summary }, only: result.selected };
}
