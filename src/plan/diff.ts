/** Field-level differences between two JSON values (sensitive markers compare by hash). */
import { isDeepStrictEqual } from "node:util";
import type { PathSegment } from "../text/field-path.js";
import { formatPath } from "../text/field-path.js";
import { canonical } from "../kinds/canonical.js";
import { isDocumentRef, materialize } from "../kinds/document-ref.js";
import { isSensitiveMarker } from "../secrets/markers.js";

export interface FieldChange {
  /** Dotted path: `definition.info.title`, `access_rights.acme.limit.rate`, `Events[1]`. */
  readonly path: string;
  readonly op: "add" | "remove" | "change";
  /** Values may be sensitive markers; renderers show them as (sensitive). */
  readonly before?: unknown;
  readonly after?: unknown;
}

function isPlainObject(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v) && !isSensitiveMarker(v);
}

export function diffValues(before: unknown, after: unknown, base: PathSegment[] = []): FieldChange[] {
  if (isDocumentRef(before) || isDocumentRef(after)) {
    // a document held by reference: equal digests are equal documents; else compare them read
    if (before !== undefined && after !== undefined && canonical(before) === canonical(after)) return [];
    if (before === undefined || after === undefined)
      return before === undefined ? [{ path: formatPath(base), op: "add", after }] : [{ path: formatPath(base), op: "remove", before }];
    return diffValues(materialize(before), materialize(after), base);
  }
  if (isDeepStrictEqual(before, after)) return [];
  if (before === undefined) return [{ path: formatPath(base), op: "add", after }];
  if (after === undefined) return [{ path: formatPath(base), op: "remove", before }];
  if (isPlainObject(before) && isPlainObject(after)) {
    const keys = [...new Set([...Object.keys(before), ...Object.keys(after)])].sort();
    return keys.flatMap((k) => diffValues(before[k], after[k], [...base, k]));
  }
  if (Array.isArray(before) && Array.isArray(after) && before.length === after.length) {
    return before.flatMap((b, i) => diffValues(b, after[i], [...base, i]));
  }
  return [{ path: formatPath(base), op: "change", before, after }];
}

/**
 * Each top-level field of a value nothing was applied of, as added, in key order: what
 * `diffValues(undefined, …)` gives field by field, without a deep comparison per field (a first
 * plan lists every field of every request: 80,000 lines at 10,000 resources).
 */
export function addedFields(value: Readonly<Record<string, unknown>>): FieldChange[] {
  const fields: FieldChange[] = [];
  for (const k of Object.keys(value).sort()) {
    const after = value[k];
    if (after !== undefined) fields.push({ path: formatPath([k]), op: "add", after });
  }
  return fields;
}
