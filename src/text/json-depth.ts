/**
 * The one JSON depth scanner: how deep the first value of a JSON text nests, counted on the text
 * before JSON.parse sees it — JSON.parse recurses, and a text nested 10,000 deep (someone else's
 * file for `gatesync import`, a request body for the sandbox) would exhaust its stack. Linear in
 * the text and iterative; it stops as soon as the nesting passes the cap. Hand-written: a
 * streaming parser would be a dependency for one counter.
 */

export interface JsonScan {
  /** The deepest nesting of `[` and `{` (outside strings) seen; past `cap`, the scan stopped there. */
  readonly depth: number;
  /** Whether the nesting went past the cap. */
  readonly tooDeep: boolean;
  /** Where the value starting at `start` ends (the index after it) when it is an object, array or string that ends; else undefined. */
  readonly end: number | undefined;
}

/** Scans the object, array or string that starts at `start` (white space skipped by the caller) up to its end. */
export function scanJsonValue(text: string, start: number, cap: number): JsonScan {
  let depth = 0;
  let max = 0;
  let inString = false;
  for (let i = start; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (inString) {
      // a backslash escapes the next character (`\"` does not end the string)
      if (c === 92) i++;
      else if (c === 34) {
        inString = false;
        if (depth === 0) return { depth: max, tooDeep: false, end: i + 1 };
      }
    } else if (c === 34) inString = true;
    else if (c === 123 || c === 91) {
      if (++depth > max && (max = depth) > cap) return { depth: max, tooDeep: true, end: undefined };
    } else if (c === 125 || c === 93) {
      if (--depth <= 0) return { depth: max, tooDeep: false, end: depth === 0 ? i + 1 : undefined };
    } else if (depth === 0) return { depth: max, tooDeep: false, end: undefined };
  }
  return { depth: max, tooDeep: false, end: undefined };
}

/** Whether the first value of a JSON text nests deeper than `cap` (its leading white space skipped). */
export function jsonTooDeep(text: string, cap: number): boolean {
  const start = text.search(/\S/);
  return start >= 0 && scanJsonValue(text, start, cap).tooDeep;
}

/**
 * A server's JSON answer parsed, or undefined when it is not JSON or nests deeper than `cap`:
 * JSON.parse itself takes a million levels, but the first JSON.stringify or recursive walk of
 * its value exhausts the stack, so an answer of a known shallow shape is refused first.
 */
export function parseJsonWithin(text: string, cap: number): unknown {
  if (jsonTooDeep(text, cap)) return undefined;
  try {
    return JSON.parse(text) as unknown;
  } catch {
    return undefined;
  }
}
