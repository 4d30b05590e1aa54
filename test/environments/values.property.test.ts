/**
 * `${var:NAME}` substitution (load/values.ts), for any values and any strings around the
 * references: a string that is only a reference takes the value's type, several references in
 * one string are each replaced, nothing is substituted twice (a value holding a reference stays
 * that text, and never becomes a secret reference), escapes stay, and parts without references
 * are the same objects.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { findSecretRefs, resolveSecretString } from "../../src/load/secret-refs.js";
import { substituteValues } from "../../src/load/values.js";
import type { Value } from "../../src/load/values.js";

const runs = Number(process.env.GATESYNC_FUZZ_RUNS ?? 60);

const name = fc.stringMatching(/^[A-Za-z_][A-Za-z0-9_.-]{0,8}$/);
const value: fc.Arbitrary<Value> = fc.oneof(fc.string(), fc.integer(), fc.double({ noNaN: true, noDefaultInfinity: true }), fc.boolean());
/** Text around references: anything but `$` (so it cannot start or escape a reference itself). */
const text = fc.string().map((s) => s.replaceAll("$", ""));
const values = fc.dictionary(name, value, { minKeys: 1, maxKeys: 6 });

/** The secret stage's reading of a string with no secret reference: `$${` is the written `${`. */
const unescape = (s: string): string => resolveSecretString(s, { lookup: () => ({ ok: false, reason: "missing", message: "none" }) });

describe("value substitution", () => {
  it("types a string that is only the reference as its value", () => {
    fc.assert(
      fc.property(values, (vals) => {
        for (const [n, v] of Object.entries(vals)) {
          const out = substituteValues({ spec: { field: `\${var:${n}}` } }, vals).value as { spec: { field: unknown } };
          if (typeof v === "string") expect(unescape(out.spec.field as string)).toBe(v);
          else expect(out.spec.field).toBe(v);
        }
      }),
      { numRuns: runs },
    );
  });

  it("replaces each of several references in one string as text, once, and never makes a secret reference", () => {
    fc.assert(
      fc.property(values, fc.array(fc.tuple(text, fc.boolean()), { minLength: 2, maxLength: 6 }), text, (vals, parts, tail) => {
        const names = Object.keys(vals);
        let written = "";
        let expected = "";
        parts.forEach(([before, _], i) => {
          const n = names[i % names.length]!;
          written += `${before}\${var:${n}}`;
          expected += `${before}${String(vals[n])}`;
        });
        written += tail;
        expected += tail;
        const out = substituteValues([written], vals);
        const result = (out.value as string[])[0]!;
        expect(typeof result).toBe("string");
        // a value's own `${…}` is escaped: the secret stage finds no reference and writes it as the value said
        expect(findSecretRefs(result)).toEqual([]);
        expect(unescape(result)).toBe(expected);
        expect(out.missing).toEqual([]);
        expect([...out.used].sort()).toEqual([...new Set(parts.map((_, i) => names[i % names.length]!))].sort());
      }),
      { numRuns: runs },
    );
  });

  it("does not substitute twice: a value holding a reference stays that text", () => {
    fc.assert(
      fc.property(name, name, value, (a, b, other) => {
        fc.pre(a !== b);
        const vals = { [a]: `\${var:${b}}`, [b]: other };
        const out = substituteValues({ x: `\${var:${a}}`, y: `pre \${var:${a}} post` }, vals).value as { x: string; y: string };
        expect(unescape(out.x)).toBe(`\${var:${b}}`);
        expect(unescape(out.y)).toBe(`pre \${var:${b}} post`);
      }),
      { numRuns: runs },
    );
  });

  it("reports each missing reference with its path, leaves escapes and strings without references as they are", () => {
    fc.assert(
      fc.property(values, name, text, (vals, missingName, t) => {
        fc.pre(!Object.hasOwn(vals, missingName));
        const untouched = { keep: [t, 1, true, null] };
        const input = { a: untouched, b: [`\${var:${missingName}}`], c: `$\${var:${missingName}}` };
        const out = substituteValues(input, vals);
        expect(out.missing).toEqual([{ path: ["b", 0], name: missingName }]);
        const v = out.value as typeof input;
        expect(v.a).toBe(untouched);
        expect(v.b).toEqual([`\${var:${missingName}}`]);
        expect(v.c).toBe(`$\${var:${missingName}}`);
      }),
      { numRuns: runs },
    );
  });
});
