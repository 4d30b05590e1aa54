/**
 * The one JSON depth scanner (src/text/json-depth.ts) on the worst inputs both its callers meet:
 * nesting far past any cap, brackets inside strings and escaped quotes, text that never closes,
 * and a long text scanned in time linear in its length. Its callers' own tests cover the
 * same inputs as users meet them: import's hostile dump (test/import/import-sources.test.ts) and
 * the sandbox's 413 for deep bodies (test/sandbox/faults-events.test.ts).
 */
import { describe, expect, it } from "vitest";
import { jsonTooDeep, scanJsonValue } from "../../src/text/json-depth.js";
import { firstJsonValue } from "../../src/sandbox/wire.js";
import { parseJsonBounded, defaultInputLimits } from "../../src/import/bounded-input.js";

describe("the JSON depth scanner", () => {
  it("stops past the cap on a text nested 10,000 deep, before JSON.parse would recurse", () => {
    const deep = "[".repeat(10_000) + "]".repeat(10_000);
    expect(scanJsonValue(deep, 0, 128)).toEqual({ depth: 129, tooDeep: true, end: undefined });
    expect(jsonTooDeep(`  \n${deep}`, 128)).toBe(true);
    expect(jsonTooDeep(deep, 10_000)).toBe(false);
    expect(() => parseJsonBounded(deep, defaultInputLimits)).toThrow("JSON is nested more than 128 deep");
    expect(() => firstJsonValue(`{"a":${deep}}`, 100)).toThrow();
  });

  it("counts no bracket inside a string, and an escaped quote does not end one", () => {
    const text = `{"a":"[[[[{{{{\\"[[[[","b":[[1]]}`;
    expect(scanJsonValue(text, 0, 128)).toEqual({ depth: 3, tooDeep: false, end: text.length });
    expect(jsonTooDeep(`["${"[".repeat(10_000)}"]`, 2)).toBe(false);
  });

  it("says where the first value ends (what follows is Go's to ignore), and nothing for a text that never closes", () => {
    expect(scanJsonValue(`{"a":1} trailing`, 0, 8).end).toBe(7);
    expect(scanJsonValue(`"str" x`, 0, 8).end).toBe(5);
    expect(scanJsonValue("[[[", 0, 8)).toEqual({ depth: 3, tooDeep: false, end: undefined });
    expect(firstJsonValue(`{"a":1} {"b":`, 8)).toEqual({ ok: true, value: { a: 1 } });
    expect(firstJsonValue("[[[", 8)).toEqual({ ok: false });
  });

  it("scans 16 MiB in time linear in the text (no quadratic rescans)", () => {
    const flat = `[${"1,".repeat(8 * 1024 * 1024)}1]`;
    const t0 = performance.now();
    expect(scanJsonValue(flat, 0, 128)).toMatchObject({ depth: 1, end: flat.length });
    expect(performance.now() - t0).toBeLessThan(2000);
  });
});
