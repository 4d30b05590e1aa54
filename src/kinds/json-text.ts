/**
 * Which values may be held as JSON text (`JsonText`, src/deferred.ts): a one-shot command at
 * 100,000 resources then keeps a few hundred bytes per resource (the text) instead of its
 * object tree (about 2.4 KB in V8: every string copied per resource, an object per mapping).
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
