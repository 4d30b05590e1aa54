/**
 * Go's `encoding/json` as far as the sandbox needs it: a JSON value decoded into a described
 * type. `null` is accepted anywhere (the member keeps its zero value), unknown members are
 * ignored, and a member of the wrong JSON type is an error naming it. With `foldCase`, member
 * names match case-insensitively (an exact match first), as Go matches struct fields.
 */
import { BodyTooLarge } from "../http/http-io.js";
import { scanJsonValue } from "../text/json-depth.js";

export type WireType =
  | "string"
  | "bool"
  | "number"
  | "integer"
  | "any"
  | { readonly object: Readonly<Record<string, WireType>> }
  | { readonly map: WireType }
  | { readonly array: WireType };

export type Decoded = { readonly ok: true; readonly value: unknown } | { readonly ok: false; readonly problem: string };

export interface DecodeOptions {
  readonly foldCase?: boolean;
}

const isPlainObject = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);

function jsonType(v: unknown): string {
  if (Array.isArray(v)) return "array";
  if (v === null) return "null";
  return typeof v === "boolean" ? "bool" : typeof v;
}

function typeName(type: WireType): string {
  if (typeof type === "string") return type;
  if ("object" in type) return "object";
  return "map" in type ? "object" : "array";
}

/** The member of a described object an incoming name fills (Go: exact, else case-insensitive). */
function memberFor(name: string, described: Readonly<Record<string, WireType>>, foldCase: boolean): string | undefined {
  if (name in described) return name;
  if (!foldCase) return undefined;
  const lower = name.toLowerCase();
  return Object.keys(described).find((k) => k.toLowerCase() === lower);
}

/**
 * Decodes `value` as `type`. The result has described members under their described names
 * (unknown members are kept as they came); the problem names the member, Go-style.
 */
export function decodeWire(value: unknown, type: WireType, options: DecodeOptions = {}, path = ""): Decoded {
  if (value === null || type === "any") return { ok: true, value };
  const wrong = (): Decoded => ({ ok: false, problem: `${path === "" ? "body" : path}: cannot decode ${jsonType(value)} as ${typeName(type)}` });
  switch (type) {
    case "string":
      return typeof value === "string" ? { ok: true, value } : wrong();
    case "bool":
      return typeof value === "boolean" ? { ok: true, value } : wrong();
    case "number":
      return typeof value === "number" ? { ok: true, value } : wrong();
    case "integer":
      return typeof value === "number" && Number.isInteger(value) ? { ok: true, value } : wrong();
  }
  if ("array" in type) {
    if (!Array.isArray(value)) return wrong();
    const out: unknown[] = [];
    for (const [i, item] of value.entries()) {
      const d = decodeWire(item, type.array, options, `${path}[${i}]`);
      if (!d.ok) return d;
      out.push(d.value);
    }
    return { ok: true, value: out };
  }
  if (!isPlainObject(value)) return wrong();
  const out: Record<string, unknown> = {};
  for (const [name, member] of Object.entries(value)) {
    const described = "map" in type ? name : memberFor(name, type.object, options.foldCase === true);
    const memberType = "map" in type ? type.map : described === undefined ? undefined : type.object[described];
    if (described === undefined || memberType === undefined) {
      out[name] = member;
      continue;
    }
    const d = decodeWire(member, memberType, options, path === "" ? described : `${path}.${described}`);
    if (!d.ok) return d;
    out[described] = d.value;
  }
  return { ok: true, value: out };
}

/** The zero value Go gives a member of this type (`null` for maps, slices and objects). */
export function zeroOf(type: WireType): unknown {
  switch (type) {
    case "string":
      return "";
    case "bool":
      return false;
    case "number":
    case "integer":
      return 0;
    default:
      return null;
  }
}

/**
 * The first JSON value of `text`, as Go's `json.Decoder.Decode` reads it: anything after it is
 * ignored; nothing but white space is an error, as is a broken first value. A value nested
 * deeper than `maxDepth` is refused like an oversized body (BodyTooLarge).
 */
export function firstJsonValue(text: string, maxDepth: number): { ok: true; value: unknown } | { ok: false } {
  const start = text.search(/\S/);
  if (start < 0) return { ok: false };
  const end = valueEnd(text, start, maxDepth);
  if (end === undefined) return { ok: false };
  try {
    return { ok: true, value: JSON.parse(text.slice(start, end)) };
  } catch {
    return { ok: false };
  }
}

function valueEnd(text: string, start: number, maxDepth: number): number | undefined {
  const first = text[start];
  if (first !== "{" && first !== "[" && first !== '"') {
    const m = /^[-+.\w]+/.exec(text.slice(start));
    return m === null ? undefined : start + m[0].length;
  }
  const scan = scanJsonValue(text, start, maxDepth);
  if (scan.tooDeep) throw new BodyTooLarge();
  return scan.end;
}
