/**
 * `${var:NAME}` references: an environment's values (docs/user/environments.md) put into the
 * strings of a document before it is checked, so the schema, the kind rules, the OpenAPI
 * checks and the governance rules all see what the environment will send.
 *
 * - A string that is only the reference takes the value's type: `rate: ${var:key_rate}` is a
 *   number when `key_rate` is one. A reference inside a longer string is written as text.
 * - One pass: a value is never searched for references itself, so a value holding `${var:x}`
 *   or `${env:X}` stays that text. A `${` inside an inserted string is written `$${` (the
 *   escape of resource files), so a value never becomes a secret reference: values are not
 *   secrets, and secrets stay `${env:}`/`${file:}` (secrets/references.ts).
 * - `$${var:NAME}` is the escape: left as written (the secret stage turns `$${` into `${`).
 * Copy-on-write: a part without references is returned as it is.
 */
import type { PathSegment } from "../text/field-path.js";

export type Value = string | number | boolean;

/** What an environment's values are, where a check needs them (plain data: it crosses to worker threads). */
export interface ValuesContext {
  /** The environment's name, for findings (`default` for a config without environments). */
  readonly environment: string;
  readonly values: Readonly<Record<string, Value>>;
}

export interface MissingValue {
  readonly path: readonly PathSegment[];
  readonly name: string;
}

export interface Substituted {
  readonly value: unknown;
  /** The names referenced (found or not). */
  readonly used: ReadonlySet<string>;
  /** References the values do not define, with where they are. */
  readonly missing: readonly MissingValue[];
}

const pattern = /\$\$\{|\$\{var:([^}]*)\}/g;
const whole = /^\$\{var:([^}]*)\}$/;

/** Whether a string holds a `${var:}` reference (escapes excluded). */
export function hasValueRef(text: string): boolean {
  if (!text.includes("${var:")) return false;
  for (const m of text.matchAll(pattern)) if (m[1] !== undefined) return true;
  return false;
}

/**
 * A value's text as the secret stage will read it back: each `${` written `$${`. (Split and
 * joined, not `replaceAll` with a replacement string, where `$$` is itself an escape for `$`:
 * that wrote `${` again, and a value `${env:X}` became a secret reference — issue 43.)
 */
const escaped = (text: string): string => text.split("${").join("$${");

/** One string with its references replaced; `found(name)` is the value, or undefined when missing. */
function substituteString(text: string, lookup: (name: string) => Value | undefined): unknown {
  const only = whole.exec(text);
  if (only !== null) {
    const value = lookup(only[1]!);
    if (value === undefined) return text;
    return typeof value === "string" ? escaped(value) : value;
  }
  return text.replace(pattern, (match, name: string | undefined) => {
    if (name === undefined) return match;
    const value = lookup(name);
    return value === undefined ? match : escaped(String(value));
  });
}

/** `value` (a parsed document) with every `${var:NAME}` replaced by its value in `values`. */
export function substituteValues(value: unknown, values: Readonly<Record<string, Value>>): Substituted {
  const used = new Set<string>();
  const missing: MissingValue[] = [];
  const path: PathSegment[] = [];
  const lookup = (name: string): Value | undefined => {
    used.add(name);
    const found = Object.hasOwn(values, name) ? values[name] : undefined;
    if (found === undefined) missing.push({ path: [...path], name });
    return found;
  };
  const walk = (v: unknown): unknown => {
    if (typeof v === "string") return hasValueRef(v) ? substituteString(v, lookup) : v;
    if (v === null || typeof v !== "object") return v;
    if (Array.isArray(v)) {
      let out: unknown[] | undefined;
      v.forEach((item, i) => {
        path.push(i);
        const next = walk(item);
        path.pop();
        if (next !== item) (out ??= [...(v as unknown[])])[i] = next;
      });
      return out ?? v;
    }
    let out: Record<string, unknown> | undefined;
    for (const [k, item] of Object.entries(v)) {
      path.push(k);
      const next = walk(item);
      path.pop();
      // defined, not assigned: a `__proto__` key of a parsed document stays a key
      if (next !== item)
        Object.defineProperty((out ??= { ...(v as Record<string, unknown>) }), k, { value: next, enumerable: true, writable: true, configurable: true });
    }
    return out ?? v;
  };
  return { value: walk(value), used, missing };
}
