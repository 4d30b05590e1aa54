/**
 * Reading and shaping a spec's fields: the helpers the kind modules share (a kind's own rules stay
 * in its module).
 */
import type { PathSegment } from "../text/field-path.js";
import type { ApiIdLookup, ResourceReference, RuleFinding, Spec } from "./kind.js";

/** `a, b ,c` → `a,b,c`: equivalent CSV spellings compare equal. */
export function normaliseCsv(value: unknown): unknown {
  return typeof value === "string"
    ? value
        .split(",")
        .map((s) => s.trim())
        .filter((s) => s !== "")
        .join(",")
    : value;
}

/** The spec without fields the request must not carry or the comparison must not see. */
export function withoutFields(spec: Spec, keys: readonly string[]): Record<string, unknown> {
  return Object.fromEntries(Object.entries(spec).filter(([k]) => !keys.includes(k)));
}

/** An `apiRef` replaced by the raw id field the server expects. */
export function withApiId(item: unknown, idField: string, apiIdOf: ApiIdLookup): unknown {
  if (item === null || typeof item !== "object") return item;
  const { apiRef, ...rest } = item as Record<string, unknown>;
  return typeof apiRef === "string" ? { [idField]: apiIdOf(apiRef) ?? "", ...rest } : rest;
}

/** A string or number member as a string (ids in server answers), or undefined. */
export function idMember(value: unknown, key: string): string | undefined {
  const v = value !== null && typeof value === "object" ? (value as Record<string, unknown>)[key] : undefined;
  return typeof v === "string" || typeof v === "number" ? String(v) : undefined;
}

/** A spec field that holds a string (identities and bodies are built from them), or undefined. */
export function stringField(spec: Spec, key: string): string | undefined {
  const v = spec[key];
  return typeof v === "string" ? v : undefined;
}

/** References held in `apiRef` fields of each object of a list or map. */
export function apiRefsIn(container: unknown, basePath: readonly PathSegment[]): ResourceReference[] {
  if (container === null || typeof container !== "object") return [];
  const entries: Array<[PathSegment, unknown]> = Array.isArray(container)
    ? container.map((v, i) => [i, v] as [PathSegment, unknown])
    : Object.entries(container);
  const refs: ResourceReference[] = [];
  for (const [key, item] of entries) {
    if (item !== null && typeof item === "object" && typeof (item as Spec).apiRef === "string") {
      refs.push({ path: [...basePath, key, "apiRef"], kind: "ApiDefinition", name: (item as Spec).apiRef as string });
    }
  }
  return refs;
}

/** The standard warnings for deprecated fields that are present. */
export function deprecationFindings(spec: Spec, deprecated: Readonly<Record<string, string>>): RuleFinding[] {
  return Object.entries(deprecated)
    .filter(([field]) => field in spec)
    .map(([field, replacement]) => ({
      path: ["spec", field],
      key: true,
      severity: "warning" as const,
      code: "DEPRECATED_FIELD" as const,
      message: `\`${field}\` is deprecated`,
      hint: `use \`${replacement}\` instead`,
    }));
}

/** The string ids under `field` of each entry of a list or map (a product's APIDetails' APIID, an org key's access rights' api_id). */
export function idsIn(container: unknown, field: string): string[] {
  if (container === null || typeof container !== "object") return [];
  const out: string[] = [];
  for (const item of Object.values(container)) {
    const id = item !== null && typeof item === "object" ? (item as Record<string, unknown>)[field] : undefined;
    if (typeof id === "string" && id !== "") out.push(id);
  }
  return out;
}
