/**
 * Names and references of the imported resources: duplicates of one source id reported (the
 * first in order kept), names made unique per kind in a fixed order (so the same input gives
 * the same names), OAuth clients and products naming an imported API by its resource.
 */
import { apiDefinitionKind } from "../kinds/api-definition.js";
import { apiProductKind } from "../kinds/api-product.js";
import { oauthClientKind } from "../kinds/oauth-client.js";
import type { KindName } from "../kinds/kind.js";
import type { ImportedResource, ReportEntry } from "./model.js";
import { errorEntry, isRecord } from "./model.js";

const order = (a: ImportedResource, b: ImportedResource): number => {
  const ka = `${a.kind}\0${a.sourceId}\0${a.origin.file}\0${a.origin.at ?? ""}`;
  const kb = `${b.kind}\0${b.sourceId}\0${b.origin.file}\0${b.origin.at ?? ""}`;
  return ka < kb ? -1 : ka > kb ? 1 : 0;
};

/** One resource per source id: the first in order; every other, a located error naming the first. */
export function withoutDuplicates(
  resources: readonly ImportedResource[],
  source: (r: ImportedResource) => string,
): { kept: ImportedResource[]; entries: ReportEntry[] } {
  const first = new Map<string, ImportedResource>();
  const entries: ReportEntry[] = [];
  for (const r of [...resources].sort(order)) {
    const seen = first.get(r.sourceId);
    if (seen === undefined) first.set(r.sourceId, r);
    else {
      const at = `${seen.origin.file}${seen.origin.at === undefined ? "" : ` ${seen.origin.at}`}`;
      entries.push(
        errorEntry(r.origin, source(r), `duplicate id: ${r.sourceId} is also at ${at} (that one is imported)`, "remove one of the two from the source"),
      );
    }
  }
  return { kept: [...first.values()], entries };
}

/** Names unique per kind: `taken` holds the names the repository already uses for other objects. */
export function uniqueNames(resources: readonly ImportedResource[], taken: ReadonlyMap<KindName, ReadonlySet<string>> = new Map()): ImportedResource[] {
  const used = new Map<KindName, Set<string>>();
  return [...resources].sort(order).map((r) => {
    const names = used.get(r.kind) ?? new Set(taken.get(r.kind) ?? []);
    used.set(r.kind, names);
    let name = r.name;
    for (let n = 2; names.has(name); n++) name = `${r.name.slice(0, 60)}-${n}`;
    names.add(name);
    return name === r.name ? r : { ...r, name };
  });
}

/** OAuth clients' `apiId` and products' `APIID` replaced by `apiRef` where the API is imported alongside. */
export function withApiRefs(resources: readonly ImportedResource[]): ImportedResource[] {
  const byId = new Map<string, string>();
  for (const r of resources) if (r.kind === apiDefinitionKind.kind && typeof r.spec.apiId === "string") byId.set(r.spec.apiId, r.name);
  return resources.map((r) => {
    if (r.kind === oauthClientKind.kind && typeof r.spec.apiId === "string" && byId.has(r.spec.apiId)) {
      const { apiId, ...rest } = r.spec;
      return { ...r, spec: { apiRef: byId.get(apiId)!, ...rest } };
    }
    if (r.kind === apiProductKind.kind && Array.isArray(r.spec.APIDetails)) {
      const details = (r.spec.APIDetails as unknown[]).map((d): unknown => {
        if (!isRecord(d) || typeof d.APIID !== "string" || !byId.has(d.APIID)) return d;
        const { APIID, ...rest } = d;
        return { apiRef: byId.get(APIID)!, ...rest };
      });
      return { ...r, spec: { ...r.spec, APIDetails: details } };
    }
    return r;
  });
}
