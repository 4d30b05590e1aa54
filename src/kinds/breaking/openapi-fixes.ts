/**
 * Where api-smart-diff (1.0) misjudges, corrected around it:
 * - a `parameters` array added whole (the operation had none) is classified as one
 *   non-breaking addition, even when it holds a required parameter: both sides get an empty
 *   array first, so every parameter is classified on its own;
 * - a request body added whole is non-breaking even when `required: true`;
 * - a type replaced in a response is non-breaking to it whatever the types (a string field
 *   that becomes an integer breaks every client that reads it), and a query parameter's type
 *   change is always non-breaking: a replaced `type` is judged here by whether the new types
 *   accept everything the old ones did (requests) or nothing more (responses);
 * - media types are matched with wildcards, so `*\/*` next to `application/json` shows as
 *   removed and added again although nothing changed: such pairs cancel out.
 */
import { isDeepStrictEqual } from "node:util";
import type { Diff } from "api-smart-diff";
import { isRecord } from "./types.js";

const methods = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

type Doc = Record<string, unknown>;

/** Copies of both documents where every path item and operation present on both sides has `parameters`. */
export function withParameterLists(before: Doc, after: Doc): [Doc, Doc] {
  const b = structuredClone(before);
  const a = structuredClone(after);
  const bp = isRecord(b.paths) ? b.paths : {};
  const ap = isRecord(a.paths) ? a.paths : {};
  const fill = (x: Record<string, unknown>, y: Record<string, unknown>): void => {
    if (Array.isArray(x.parameters) !== Array.isArray(y.parameters)) {
      if (x.parameters === undefined) x.parameters = [];
      if (y.parameters === undefined) y.parameters = [];
    }
  };
  for (const path of Object.keys(bp)) {
    const [pb, pa] = [bp[path], ap[path]];
    if (!isRecord(pb) || !isRecord(pa) || "$ref" in pb || "$ref" in pa) continue;
    fill(pb, pa);
    for (const m of methods) {
      const [ob, oa] = [pb[m], pa[m]];
      if (isRecord(ob) && isRecord(oa)) fill(ob, oa);
    }
  }
  return [b, a];
}

const key = (d: Diff): string => JSON.stringify(d.path);

const types = (v: unknown): string[] => (typeof v === "string" ? [v] : Array.isArray(v) ? v.filter((t): t is string => typeof t === "string") : []);

/** Every value of `inner` types is a value of `outer` types (an integer is a number). */
const within = (inner: string[], outer: string[]): boolean => inner.every((t) => outer.includes(t) || (t === "integer" && outer.includes("number")));

function retyped(d: Diff): Diff {
  const path = d.path.map(String);
  if (d.action !== "replace" || path[0] !== "paths" || path.at(-1) !== "type") return d;
  const [b, a] = [types(d.before), types(d.after)];
  if (b.length === 0 || a.length === 0) return d;
  const inResponse = path.includes("responses");
  const schemaAt = path.lastIndexOf("schema");
  const field = path
    .slice(schemaAt + 1, -1)
    .filter((s) => s !== "properties" && s !== "items")
    .join(".");
  const where = inResponse ? `the ${path[path.indexOf("responses") + 1] ?? ""} response` : path.includes("requestBody") ? "the request body" : "a parameter";
  const ok = inResponse ? within(a, b) : within(b, a);
  const consequence = ok
    ? inResponse
      ? "it returns a subset of what it did"
      : "it accepts everything it did"
    : inResponse
      ? "clients that read it get values of another type"
      : "requests valid before are refused";
  const description = `type of ${field === "" ? "the value" : `\`${field}\``} in ${where} changed from ${b.join("|")} to ${a.join("|")}: ${consequence}`;
  return { ...d, type: ok ? "non-breaking" : "breaking", description };
}

/** Corrects the classification of whole request bodies and drops remove/add pairs of equal values. */
export function corrected(diffs: readonly Diff[]): Diff[] {
  const removed = new Map(diffs.filter((d) => d.action === "remove").map((d) => [key(d), d]));
  const added = new Map(diffs.filter((d) => d.action === "add").map((d) => [key(d), d]));
  const cancelled = new Set([...removed.keys()].filter((k) => added.has(k) && isDeepStrictEqual(removed.get(k)?.before, added.get(k)?.after)));
  return diffs
    .filter((d) => !((d.action === "add" || d.action === "remove") && cancelled.has(key(d))))
    .map(retyped)
    .map((d) =>
      d.action === "add" && d.path.at(-1) === "requestBody" && isRecord(d.after) && d.after.required === true
        ? { ...d, type: "breaking" as const, description: "[Added] required Request Body: callers that send none are refused" }
        : d,
    );
}
