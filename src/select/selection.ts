/**
 * Which resources one plan or apply covers: `--target` (with what the targets reference),
 * `--exclude`, `--kind`, `--selector`, and the config's `selector` (what this instance owns).
 * Pure: resources and records in, the selected ids and a summary for the plan out.
 *
 * Records whose resource left the repository (orphans) are judged by what the record holds:
 * its kind, its id, and the labels it was last applied with. A record without labels (written
 * before labels were recorded) matches no label selector: an instance with a selector never
 * reports, deactivates or forgets it; an instance without one does.
 */
import { UsageError } from "../errors.js";
import { isKindName, kindNames } from "../kinds/registry.js";
import type { ResourceRecord } from "../record/state.js";
import { matchesSelector, parseSelector } from "../label-selector.js";
import type { Selector } from "../label-selector.js";

/** What was asked for, as a saved plan records it. */
export interface SelectionRequest {
  readonly targets: readonly string[];
  readonly excludes: readonly string[];
  readonly kinds: readonly string[];
  readonly selector?: string;
}

/** The selection a plan covered: what was asked, and how much it left out. */
export interface PlanSelection extends SelectionRequest {
  /** The config's `selector`: what this instance owns. */
  readonly configSelector?: string;
  /** Resources selected because a target references them. */
  readonly pulledIn: ReadonlyArray<{ readonly id: string; readonly by: readonly string[] }>;
  /** Repository resources in the selection, and left out. */
  readonly selected: number;
  readonly leftOut: number;
  /** State records of resources gone from the repository that lie outside the selection. */
  readonly recordsOutside: number;
}

export interface SelectionItem {
  readonly id: string;
  readonly kind: string;
  readonly labels: Readonly<Record<string, string>>;
  readonly dependsOn: readonly string[];
}

export interface Scope {
  readonly request: SelectionRequest;
  readonly selector?: Selector;
  readonly owner?: Selector;
}

export interface SelectionResult {
  readonly selected: ReadonlySet<string>;
  /** Judges a record whose resource is not in the repository. */
  readonly includesRecord: (record: ResourceRecord) => boolean;
  readonly summary: (records: Iterable<ResourceRecord>, present: ReadonlySet<string>) => PlanSelection;
}

export const emptyRequest: SelectionRequest = { targets: [], excludes: [], kinds: [] };

export function isSelective(request: SelectionRequest, configSelector: string | undefined): boolean {
  return (
    request.targets.length > 0 || request.excludes.length > 0 || request.kinds.length > 0 || request.selector !== undefined || configSelector !== undefined
  );
}

function checkId(id: string, flag: string): string {
  const slash = id.indexOf("/");
  const kind = id.slice(0, slash);
  if (slash <= 0 || slash === id.length - 1) throw new UsageError(`${flag} ${JSON.stringify(id)}: give Kind/name`, `e.g. ${flag} ApiDefinition/petstore`);
  if (!isKindName(kind)) throw new UsageError(`${flag} ${JSON.stringify(id)}: unknown kind ${JSON.stringify(kind)}`, `kinds: ${kindNames.join(", ")}`);
  return id;
}

/** Checks the request's spelling and parses its selectors. */
export function scopeOf(request: SelectionRequest, configSelector: string | undefined): Scope {
  request.targets.forEach((t) => checkId(t, "--target"));
  request.excludes.forEach((t) => checkId(t, "--exclude"));
  for (const k of request.kinds) if (!isKindName(k)) throw new UsageError(`--kind ${JSON.stringify(k)}: unknown kind`, `kinds: ${kindNames.join(", ")}`);
  return {
    request,
    ...(request.selector === undefined ? {} : { selector: parseSelector(request.selector) }),
    ...(configSelector === undefined ? {} : { owner: parseSelector(configSelector) }),
  };
}

const closest = (id: string, known: Iterable<string>): string => {
  const kind = id.slice(0, id.indexOf("/") + 1);
  const same = [...known].filter((k) => k.startsWith(kind)).sort();
  return same.length === 0 ? "" : ` (known: ${same.slice(0, 8).join(", ")}${same.length > 8 ? ", …" : ""})`;
};

/** Follows the targets' references (transitively) inside what the instance owns. */
function pullIn(targets: readonly string[], byId: ReadonlyMap<string, SelectionItem>, owns: (i: SelectionItem) => boolean): Map<string, Set<string>> {
  const pulled = new Map<string, Set<string>>();
  const queue = targets.map((t) => ({ id: t, root: t }));
  const seen = new Set(targets);
  for (let next = queue.shift(); next !== undefined; next = queue.shift()) {
    for (const dep of byId.get(next.id)?.dependsOn ?? []) {
      const item = byId.get(dep);
      if (item === undefined || !owns(item) || targets.includes(dep)) continue;
      if (!pulled.has(dep)) pulled.set(dep, new Set());
      pulled.get(dep)!.add(next.root);
      if (!seen.has(dep)) {
        seen.add(dep);
        queue.push({ id: dep, root: next.root });
      }
    }
  }
  return pulled;
}

export function selectResources(items: readonly SelectionItem[], recordIds: ReadonlySet<string>, scope: Scope): SelectionResult {
  const { request, selector, owner } = scope;
  const byId = new Map(items.map((i) => [i.id, i]));
  const owns = (labels: Readonly<Record<string, string>> | undefined): boolean =>
    owner === undefined || (labels !== undefined && matchesSelector(owner, labels));
  const filtered = (kind: string, labels: Readonly<Record<string, string>> | undefined): boolean =>
    (request.kinds.length === 0 || request.kinds.includes(kind)) && (selector === undefined || (labels !== undefined && matchesSelector(selector, labels)));
  for (const t of request.targets) {
    const item = byId.get(t);
    if (item === undefined) {
      if (recordIds.has(t)) continue;
      throw new UsageError(`--target ${t}: no such resource in the repository or the state${closest(t, byId.keys())}`);
    }
    if (!owns(item.labels))
      throw new UsageError(`--target ${t}: outside this instance's selector`, "the config's `selector` says which resources this gatesync owns");
    if (!filtered(item.kind, item.labels)) throw new UsageError(`--target ${t}: it does not match --kind/--selector`, "drop the filter, or the target");
  }
  const excluded = new Set(request.excludes);
  const pulled = request.targets.length === 0 ? new Map<string, Set<string>>() : pullIn(request.targets, byId, (i) => owns(i.labels));
  const selected = new Set<string>();
  for (const item of items) {
    if (excluded.has(item.id) || !owns(item.labels)) continue;
    const chosen = request.targets.length > 0 ? request.targets.includes(item.id) || pulled.has(item.id) : filtered(item.kind, item.labels);
    if (chosen) selected.add(item.id);
  }
  const includesRecord = (r: ResourceRecord): boolean =>
    !excluded.has(r.id) && owns(r.labels) && (request.targets.length > 0 ? request.targets.includes(r.id) : filtered(r.kind, r.labels));
  const pulledIn = [...pulled]
    .filter(([id]) => selected.has(id))
    .map(([id, by]) => ({ id, by: [...by].sort() }))
    .sort((a, b) => (a.id < b.id ? -1 : 1));
  return {
    selected,
    includesRecord,
    summary: (records, present) => {
      let recordsOutside = 0;
      for (const r of records) if (!present.has(r.id) && !includesRecord(r)) recordsOutside++;
      return { ...request, pulledIn, selected: selected.size, leftOut: items.length - selected.size, recordsOutside };
    },
  };
}
