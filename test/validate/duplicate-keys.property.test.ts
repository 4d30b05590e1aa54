/**
 * Duplicate keys found in one pass (src/yaml/yaml-unique-keys.ts) are exactly the ones `yaml`'s own
 * quadratic check (`uniqueKeys: true`) reports, at the same offsets: for mappings with tags
 * (`!!str`), quoted and plain keys, numbers, flow and block style, nested anywhere.
 */
import fc from "fast-check";
import { Composer, Parser } from "yaml";
import { describe, expect, it } from "vitest";
import { parseYaml, parseYamlFully } from "../../src/load/yaml-reader.js";

/** Where `yaml`'s own check reports duplicate keys: the baseline. */
function yamlDuplicateOffsets(text: string): number[] {
  const composer = new Composer({ uniqueKeys: true, prettyErrors: false, strict: true });
  return [...composer.compose(new Parser().parse(text), true, text.length)].flatMap((d) =>
    d.errors.filter((e) => e.code === "DUPLICATE_KEY").map((e) => e.pos[0]),
  );
}

const lineOf = (text: string, offset: number): number => text.slice(0, offset).split("\n").length;

const keyText = fc.oneof(
  fc.constantFrom("a", "b", "1", "01", "true", "null", "~"),
  fc.constantFrom("a", "b", "1").map((k) => `!!str ${k}`),
  fc.constantFrom("a", "b", "1").map((k) => `"${k}"`),
  fc.constantFrom("a", "b", "1").map((k) => `'${k}'`),
);

type Tree = string | { readonly entries: ReadonlyArray<readonly [string, Tree]> };
const tree: fc.Arbitrary<Tree> = fc.letrec<{ node: Tree }>((tie) => ({
  node: fc.oneof(
    { depthSize: "small", withCrossShrink: true },
    fc.constantFrom("x", "1", "[1, 2]"),
    fc.record({ entries: fc.array(fc.tuple(keyText, tie("node")), { minLength: 1, maxLength: 5 }) }),
  ),
})).node;

function block(t: Tree, indent: string): string {
  if (typeof t === "string") return ` ${t}\n`;
  return `\n${t.entries.map(([k, v]) => `${indent}${k}:${block(v, `${indent}  `)}`).join("")}`;
}
const flow = (t: Tree): string => (typeof t === "string" ? t : `{ ${t.entries.map(([k, v]) => `${k}: ${flow(v)}`).join(", ")} }`);

describe("duplicate keys", () => {
  it("are those yaml's own check finds, on the same lines, in block and flow style", () => {
    fc.assert(
      fc.property(tree, fc.boolean(), (t, asFlow) => {
        if (typeof t === "string") return;
        const text = asFlow ? `${flow(t)}\n` : block(t, "").slice(1);
        const expected = yamlDuplicateOffsets(text).map((o) => lineOf(text, o));
        const found = parseYamlFully(text, "f.yaml").diagnostics.filter((d) => d.code === "YAML_DUPLICATE_KEY");
        expect(found.map((d) => d.line)).toEqual(expected);
        // and the reader's own door (the value-only parse where it is sure) agrees
        expect(parseYaml(text, "f.yaml").diagnostics.some((d) => d.code === "YAML_DUPLICATE_KEY")).toBe(expected.length > 0);
      }),
      { numRuns: 400 },
    );
  });

  it("in a 40,000-key mapping with `!!str` keys, the one repeated key is found and located", () => {
    const keys = Array.from({ length: 40_000 }, (_, i) => `!!str key-${i}: ${i}\n`);
    keys.push("!!str key-17: again\n");
    const found = parseYaml(keys.join(""), "big.yaml").diagnostics;
    expect(found).toEqual([expect.objectContaining({ code: "YAML_DUPLICATE_KEY", line: 40_001, message: "duplicate key `key-17` in mapping" })]);
  });
});
