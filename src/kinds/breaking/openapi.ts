/**
 * The OpenAPI document's own change, classified by api-smart-diff (OpenAPI 3.0 and 3.1: it
 * compares 3.0 schemas as JSON Schema draft-04 and 3.1 schemas as 2020-12). Pure: documents in,
 * classified changes out; external `$ref`s are not fetched (the library never does IO).
 */
import { createRequire } from "node:module";
import { isDeepStrictEqual } from "node:util";
import type { Diff } from "api-smart-diff";
import type * as SmartDiff from "api-smart-diff";
import { formatPath } from "../../text/field-path.js";
import { corrected, withParameterLists } from "./openapi-fixes.js";
import { sensitiveKey } from "../../secrets/markers.js";
import type { ChangeClass, ClassifiedChange } from "./types.js";
import { isRecord } from "./types.js";

export const extensionKey = "x-gw-api-gateway";

// Loaded at the first comparison, not with the kind registry that declares this classifier: every
// process and validation worker imports the registry, few compare documents (the import costs ~40 ms).
let smartDiff: typeof SmartDiff | undefined;
const apiCompare: typeof SmartDiff.apiCompare = (...args) => {
  smartDiff ??= createRequire(import.meta.url)("api-smart-diff") as typeof SmartDiff;
  return smartDiff.apiCompare(...args);
};

const classOf: Record<Diff["type"], ChangeClass> = {
  breaking: "breaking",
  "non-breaking": "non-breaking",
  annotation: "annotation",
  // a deprecation breaks nobody yet: it announces a removal
  deprecated: "non-breaking",
  unclassified: "unclassified",
};

const verb: Record<Diff["action"], string> = { add: "[Added]", remove: "[Removed]", replace: "[Replaced]", rename: "[Renamed]" };

function withoutExtension(doc: Record<string, unknown>): Record<string, unknown> {
  const { [extensionKey]: _ext, ...rest } = doc;
  return rest;
}

const isOpenApi3 = (doc: unknown): doc is Record<string, unknown> => isRecord(doc) && typeof doc.openapi === "string" && doc.openapi.startsWith("3.");

/**
 * Components are compared where they are used (the library resolves `$ref`s into the
 * operations): their own entries would repeat those findings without saying where. Security
 * schemes are the exception: they are used by name, not by `$ref`.
 */
function shown(d: Diff): boolean {
  return d.path[0] !== "components" || d.path[1] === "securitySchemes";
}

function reasonOf(d: Diff, path: readonly (string | number)[]): string {
  const text = d.description?.trim() ?? "";
  return text === "" ? `${verb[d.action]} ${formatPath(path)}` : text.replace(/\s+/g, " ");
}

/** Classifies the change of `definition` (the gateway extension excepted: see gateway.ts). */
export function classifyOpenApi(before: unknown, after: unknown, base = "definition"): ClassifiedChange[] {
  if (!isOpenApi3(before) || !isOpenApi3(after)) {
    if (isDeepStrictEqual(before, after)) return [];
    return [{ path: base, class: "unclassified", reason: "not an OpenAPI 3 document on both sides: the change cannot be classified, review it by hand" }];
  }
  const b = withoutExtension(before);
  const a = withoutExtension(after);
  if (isDeepStrictEqual(b, a)) return [];
  let diffs: Diff[];
  try {
    // copies: the library writes into its inputs while it compares, and the plan's values must stay intact
    diffs = corrected(apiCompare(...withParameterLists(b, a)).diffs);
  } catch (err) {
    return [
      { path: base, class: "unclassified", reason: `the OpenAPI diff failed (${err instanceof Error ? err.message : String(err)}): review the change by hand` },
    ];
  }
  // components alone changed (nothing uses them): their own entries are all there is to show
  const used = diffs.some(shown) ? diffs.filter(shown) : diffs;
  if (used.length === 0)
    return [{ path: base, class: "unclassified", reason: "the OpenAPI diff finds no difference it can classify in this change: review it by hand" }];
  return used.map((d) => {
    const path = d.path.filter((seg) => seg !== sensitiveKey);
    return { path: formatPath([base, ...path]), class: classOf[d.type], reason: reasonOf(d, path) };
  });
}
