/**
 * The JSON Schemas in `schemas/`, and the translation of schema errors into messages a person
 * can act on: what is wrong, at which field, and what would be right.
 *
 * The schemas are compiled at build time (`npm run schemas`: ajv's standalone code in
 * src/validate/compiled/, with the options of the ajv instance that compiled them at run time
 * before — allErrors, verbose, strict, ajv-formats, `x-error` — so their errors are the same).
 */
import type { ErrorObject } from "ajv";
import { closest } from "fastest-levenshtein";
import type { PathSegment } from "../../text/field-path.js";
import { similar } from "../../text/similar.js";
import { validators as compiled } from "../compiled/gatesync-schemas.js";
import type { StandaloneValidator } from "./standalone-validator.js";

/** One schema problem, relative to the validated value. */
export interface SchemaIssue {
  readonly path: readonly PathSegment[];
  readonly message: string;
  readonly hint?: string;
  /** Point at the key rather than the value (unknown fields). */
  readonly key: boolean;
}

/** The validation function of a schema file name, or of a `file#/pointer` fragment. */
export type SchemaLookup = (schema: string) => StandaloneValidator | undefined;

const precompiled: SchemaLookup = (schema) => (Object.hasOwn(compiled, schema) ? compiled[schema] : undefined);

export class SchemaRegistry {
  /** `lookup`: the precompiled validators; tests compare them with validators compiled at run time. */
  constructor(private readonly lookup: SchemaLookup = precompiled) {}

  /** Validates `value` against a schema file name, or a `file#/pointer` fragment. */
  validate(schema: string, value: unknown): SchemaIssue[] {
    const fn = this.lookup(schema);
    if (fn === undefined) throw new Error(`schema ${schema} is not registered`);
    if (fn(value)) return [];
    return describeErrors(fn.errors ?? []);
  }
}

export function pointerToPath(pointer: string): PathSegment[] {
  if (pointer === "") return [];
  return pointer
    .slice(1)
    .split("/")
    .map((s) => s.replace(/~1/g, "/").replace(/~0/g, "~"))
    .map((s) => (/^\d+$/.test(s) ? Number(s) : s));
}

function typeOf(v: unknown): string {
  if (v === null) return "null";
  if (Array.isArray(v)) return "array";
  if (typeof v === "number") return Number.isInteger(v) ? "integer" : "number";
  return typeof v;
}

function show(v: unknown): string {
  const s = JSON.stringify(v);
  return s === undefined ? String(v) : s.length > 60 ? `${s.slice(0, 57)}...` : s;
}

/** Turns Ajv's errors into issues, dropping the noise of failed `oneOf` branches. */
export function describeErrors(errors: readonly ErrorObject[]): SchemaIssue[] {
  // A oneOf that carries its own message replaces the errors of its branches.
  const explained = errors
    .filter((e) => (e.keyword === "oneOf" || e.keyword === "anyOf") && typeof (e.parentSchema as Record<string, unknown> | undefined)?.["x-error"] === "string")
    .map((e) => `${e.instancePath}|${e.schemaPath}/`);
  const kept = errors.filter((e) => !explained.some((p) => `${e.instancePath}|${e.schemaPath}`.startsWith(p) && e.keyword !== "oneOf"));
  const seen = new Set<string>();
  const issues: SchemaIssue[] = [];
  for (const e of kept) {
    const issue = describe(e);
    const id = `${issue.path.join("/")}|${issue.message}`;
    if (seen.has(id)) continue;
    seen.add(id);
    issues.push(issue);
  }
  return issues;
}

/** A required field left out: the hint gives the field's description from the schema, where it has one. */
function missingField(path: PathSegment[], field: string, parent: Record<string, unknown>): SchemaIssue {
  const props = (parent.properties ?? {}) as Record<string, { description?: string }>;
  const description = props[field]?.description;
  return {
    path,
    key: false,
    message: `missing required field \`${field}\``,
    hint: description === undefined ? `add \`${field}\`` : `add \`${field}\`: ${description}`,
  };
}

/** A field the schema does not know: the hint suggests the nearest known one, or lists them. */
function unknownField(path: PathSegment[], field: string, parent: Record<string, unknown>): SchemaIssue {
  const known = Object.keys(parent.properties ?? {});
  const suggestion = known.length > 0 ? closest(field, known) : undefined;
  return {
    path: [...path, field],
    key: true,
    message: `unknown field \`${field}\``,
    hint:
      suggestion !== undefined && similar(field, suggestion)
        ? `did you mean \`${suggestion}\`?`
        : known.length > 0
          ? `known fields here: ${known.join(", ")}`
          : "remove it",
  };
}

/** A value outside an enum: the hint lists the allowed ones, and the nearest when it is near. */
function notAllowed(path: PathSegment[], value: unknown, allowed: readonly string[]): SchemaIssue {
  const suggestion = typeof value === "string" ? closest(value, [...allowed]) : undefined;
  return {
    path,
    key: false,
    message: `${show(value)} is not allowed here`,
    hint: `expected one of: ${allowed.join(", ")}${suggestion !== undefined && similar(String(value), suggestion) ? ` (did you mean \`${suggestion}\`?)` : ""}`,
  };
}

function describe(e: ErrorObject): SchemaIssue {
  const path = pointerToPath(e.instancePath);
  const parent = (e.parentSchema ?? {}) as Record<string, unknown>;
  const custom = typeof parent["x-error"] === "string" ? parent["x-error"] : undefined;
  const params = e.params as Record<string, unknown>;
  switch (e.keyword) {
    case "required":
      return missingField(path, String(params.missingProperty), parent);
    case "additionalProperties":
      return unknownField(path, String(params.additionalProperty), parent);
    case "enum":
      return notAllowed(
        path,
        e.data,
        (params.allowedValues as unknown[]).map((v) => String(v)),
      );
    case "const":
      return { path, key: false, message: custom === undefined ? `must be ${show(params.allowedValue)}` : `${show(e.data)}: ${custom}` };
    case "type":
      return { path, key: false, message: `must be ${String(params.type).replace(",", " or ")}, not ${typeOf(e.data)}`, hint: `found ${show(e.data)}` };
    case "oneOf":
    case "anyOf":
      return { path, key: false, message: custom ?? "matches none of the allowed forms" };
    case "minimum":
    case "maximum":
    case "exclusiveMinimum":
    case "exclusiveMaximum": {
      const words = { minimum: "at least", maximum: "at most", exclusiveMinimum: "greater than", exclusiveMaximum: "less than" }[e.keyword];
      return { path, key: false, message: `must be ${words} ${String(params.limit)}`, hint: `found ${show(e.data)}` };
    }
    case "pattern":
      // the published gateway schemas write "not blank" as the pattern \S+
      if (params.pattern === "\\S+") return { path, key: false, message: "must not be empty or blank", hint: `found ${show(e.data)}` };
      return { path, key: false, message: custom === undefined ? (e.message ?? e.keyword) : `${show(e.data)}: ${custom}` };
    case "uniqueItems":
      return { path, key: false, message: `items ${String(params.j)} and ${String(params.i)} are the same; each may appear once` };
    default:
      return { path, key: false, message: custom === undefined ? (e.message ?? e.keyword) : `${show(e.data)}: ${custom}` };
  }
}
