/**
 * Checks across resources: duplicate names, references to resources that do not exist, and
 * two resources addressing one server object.
 */
import { closest } from "fastest-levenshtein";
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import type { KindName } from "../kinds/kind.js";
import { kindModule } from "../kinds/registry.js";
import type { Resource } from "../kinds/resource.js";
import { resourceId } from "../kinds/resource.js";
import type { PathSegment } from "../field-path.js";
import { formatPath } from "../field-path.js";
import { errorAt } from "./findings.js";
import type { Locate } from "./findings.js";

/**
 * The resources without such errors, and the errors. `declared`: every `Kind/name` written in
 * the repository, valid or not (a reference to an invalid one has that one's error already).
 */
export function crossCheck(resources: readonly Resource[], declared: ReadonlySet<string>, locate: Locate): { valid: Resource[]; diagnostics: Diagnostic[] } {
  const diagnostics: Diagnostic[] = [];
  const at = (r: Resource, p: readonly PathSegment[]): Omit<Diagnostic, "severity" | "code" | "message"> => ({ file: r.source.file, resource: resourceId(r), path: formatPath(p), ...locate(r.source.file, r.source.index, p) });
  const bad = new Set<Resource>();
  const byKind = new Map<KindName, Map<string, Resource>>();
  for (const r of resources) {
    let names = byKind.get(r.kind);
    if (names === undefined) byKind.set(r.kind, (names = new Map<string, Resource>()));
    const first = names.get(r.name);
    if (first === undefined) {
      names.set(r.name, r);
      continue;
    }
    diagnostics.push(errorAt(ErrorCode.DUPLICATE_NAME, at(r, ["metadata", "name"]), `${resourceId(r)} is defined twice; first at ${first.source.file}:${first.source.line}`, "names are unique per kind: rename one of them"));
    bad.add(r);
  }
  for (const r of resources) {
    for (const ref of kindModule(r.kind).references(r.spec)) {
      // A target that is declared but invalid has its own error; do not cascade.
      if (declared.has(`${ref.kind}/${ref.name}`)) continue;
      const known = [...(byKind.get(ref.kind)?.keys() ?? [])];
      const guess = known.length > 0 ? closest(ref.name, known) : undefined;
      const hint = guess === undefined ? `define ${ref.kind}/${ref.name}, or give the raw id instead of a reference` : `did you mean \`${guess}\`? (known: ${known.slice(0, 10).join(", ")}${known.length > 10 ? ", ..." : ""})`;
      diagnostics.push(errorAt(ErrorCode.UNRESOLVED_REFERENCE, at(r, ref.path), `${ref.kind} \`${ref.name}\` does not exist in this repository`, hint));
      bad.add(r);
    }
  }
  const apis = byKind.get("ApiDefinition") ?? new Map<string, Resource>();
  const apiIdOf = (name: string): string | undefined => {
    const api = apis.get(name);
    return api === undefined ? undefined : String(api.spec.apiId);
  };
  const identities = new Map<string, Resource>();
  for (const r of resources) {
    if (bad.has(r)) continue;
    const id = kindModule(r.kind).identity(r.spec, apiIdOf);
    if (id === undefined) continue;
    const first = identities.get(id);
    if (first === undefined) {
      identities.set(id, r);
      continue;
    }
    diagnostics.push(errorAt(ErrorCode.DUPLICATE_IDENTITY, at(r, ["spec"]), `${resourceId(r)} and ${resourceId(first)} (${first.source.file}:${first.source.line}) address the same server object (${id})`, "each server object may be managed by one resource: remove or merge one of them"));
    bad.add(r);
  }
  return { valid: resources.filter((r) => !bad.has(r)), diagnostics };
}
