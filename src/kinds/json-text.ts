/**
 * Values held as JSON text and parsed again on each read. A one-shot command at 100,000
 * resources then keeps a few hundred bytes per resource (the text) instead of its object tree
 * (about 2.4 KB in V8: every string copied per resource, an object per mapping). Each read
 * gives a fresh copy — nothing is cached, or the trees would come back one read at a time —
 * so a reader that needs the value twice keeps it in a local.
 *
 * Only plain JSON data is held this way (`isPlainJson`); anything else — a document held by
 * reference, a non-finite number, -0 — stays an object, because text would not give it back.
 */

/** Plain objects and arrays of strings, finite numbers (not -0), booleans and null, nothing else. */
export function isPlainJson(value: unknown): boolean {
  switch (typeof value) {
    case "string":
    case "boolean":
      return true;
    case "number":
      return Number.isFinite(value) && !Object.is(value, -0);
    case "object": {
      if (value === null) return true;
      if (Array.isArray(value)) {
        for (let i = 0; i < value.length; i++) if (!(i in value) || !isPlainJson(value[i])) return false;
        return true;
      }
      const proto = Object.getPrototypeOf(value) as unknown;
      if (proto !== Object.prototype && proto !== null) return false;
      if (Object.getOwnPropertySymbols(value).length > 0) return false;
      for (const key of Object.keys(value)) if (!isPlainJson((value as Record<string, unknown>)[key])) return false;
      return true;
    }
    default:
      return false;
  }
}

/** JSON text of a value `isPlainJson` accepts, else undefined (the caller keeps the value). */
export function jsonTextOf(value: unknown): string | undefined {
  return isPlainJson(value) ? JSON.stringify(value) : undefined;
}

/*
 * The text sits under a hidden (non-enumerable, symbol-keyed) property of the holder, and the
 * field is an enumerable accessor whose getter — one function per field name, shared by every
 * holder, so holders share their hidden classes — parses it. Spreads, JSON.stringify, deep
 * equality and structured clones see the value, as they would a plain property.
 */
const fields = new Map<string, { readonly key: symbol; readonly get: (this: Record<symbol, string>) => unknown }>();

function accessor(field: string): { readonly key: symbol; readonly get: (this: Record<symbol, string>) => unknown } {
  let found = fields.get(field);
  if (found === undefined) {
    const key = Symbol(`${field} as JSON text`);
    found = {
      key,
      get(this: Record<symbol, string>) {
        return JSON.parse(this[key]!) as unknown;
      },
    };
    fields.set(field, found);
  }
  return found;
}

/** Sets `target[field]` to the value of `text` (JSON of plain data), parsed on each read. */
export function holdText<T extends object>(target: object, field: string, text: string): T {
  const { key, get } = accessor(field);
  // writable: a read-only property defined this way may keep its value in the hidden class (one class per holder)
  Object.defineProperty(target, key, { value: text, enumerable: false, writable: true, configurable: false });
  Object.defineProperty(target, field, { get, enumerable: true, configurable: false });
  return target as T;
}
