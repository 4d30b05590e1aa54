/**
 * The rules' findings as gatesync reports them, made on the checking thread (it holds the
 * syntax trees that locate them) from what the rules' thread sent back.
 */
import { ErrorCode } from "../errors.js";
import type { Diagnostic, Severity } from "../errors.js";
import { formatPath } from "../text/field-path.js";
import type { PathSegment } from "../text/field-path.js";
import type { Locate, Place, RawFinding } from "./rule-runner.js";

const severities: readonly Severity[] = ["error", "warning", "info", "info"];

/** Spectral's path made to follow the value: array indices as numbers (the locator's form). */
function pathIn(value: unknown, path: ReadonlyArray<string | number>): PathSegment[] {
  const out: PathSegment[] = [];
  let node = value;
  for (const seg of path) {
    const index = Array.isArray(node) && typeof seg === "string" && /^\d+$/.test(seg) ? Number(seg) : seg;
    out.push(index);
    node = node !== null && typeof node === "object" ? (node as Record<string | number, unknown>)[index] : undefined;
  }
  return out;
}

/** Spectral's findings made gatesync's, located in `place` (base: where the value sits in its document). */
export function findingsOf(results: readonly RawFinding[], value: unknown, place: Place, locate: Locate): Diagnostic[] {
  return results.map((r): Diagnostic => {
    const full = [...(place.base ?? []), ...pathIn(value, r.path)];
    // a reference to another file is not followed (as the OpenAPI check, OPENAPI_UNCHECKED_REF): said, not failed
    const external = r.code === "invalid-ref" && r.message.startsWith("No resolver defined for scheme");
    return {
      severity: external ? "warning" : (severities[r.severity] ?? "warning"),
      code: ErrorCode.RULESET_VIOLATION,
      rule: r.code,
      file: place.file,
      ...(place.resource === undefined ? {} : { resource: place.resource }),
      ...(full.length === 0 ? {} : { path: formatPath(full) }),
      ...locate(place.file, place.index, full),
      message: external ? "not checked by the rules: the reference leads to another file" : r.message,
      ...(external ? { hint: "rulesets resolve references inside the document only (nothing else is read)" } : {}),
    };
  });
}
