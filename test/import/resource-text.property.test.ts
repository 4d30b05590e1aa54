/**
 * Import validates the values it holds, then writes them with js-yaml's plain dump
 * (src/import/writer/render.ts): that is only sound if every text it writes reads back, through
 * the loader's own reader, as exactly the document it validated. For any spec and annotations —
 * strings YAML could read as numbers, booleans, nulls or merge keys, `__proto__` keys, deep
 * nesting — both of the reader's paths (the value-only parse and `yaml`'s full parse) give the
 * document back, with no finding.
 */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { resourceDocument, resourceText } from "../../src/import/writer/render.js";
import type { ImportedResource } from "../../src/import/model.js";
import { parseYaml, parseYamlFully } from "../../src/load/yaml-reader.js";
import { yamlTrickyValue } from "../helpers/yaml-values.js";

const runs = Number(process.env.GATESYNC_FUZZ_RUNS ?? 200);

/** What JSON can carry (an imported answer is JSON): -0, NaN and the infinities do not survive it. */
const jsonOnly = (v: unknown): unknown => JSON.parse(JSON.stringify(v) ?? "null") as unknown;

const resource = fc
  .record({
    spec: fc.dictionary(fc.string({ maxLength: 8 }), yamlTrickyValue, { maxKeys: 5 }),
    annotations: fc.option(fc.dictionary(fc.string({ maxLength: 8 }), fc.string()), { nil: undefined }),
    file: fc.string({ maxLength: 12 }),
  })
  .map(({ spec, annotations, file }): ImportedResource => ({
    kind: "OrgKey",
    name: "imported",
    spec: jsonOnly(spec) as Record<string, unknown>,
    ...(annotations === undefined ? {} : { annotations }),
    origin: { file },
    sourceId: "id",
    unmanaged: [],
  }));

describe("import's written resource text", () => {
  it("reads back through the loader as the document import validated, on both reading paths", () => {
    fc.assert(
      fc.property(resource, (r) => {
        const text = resourceText(r);
        const expected = [{ index: 0, line: 2, value: resourceDocument(r) }];
        for (const read of [parseYaml(text, "f.yaml"), parseYamlFully(text, "f.yaml")]) {
          expect(read.diagnostics, text).toEqual([]);
          // toEqual: the reader builds its mappings without a prototype (a `__proto__` key is a key), the arbitrary with one
          expect(read.documents, text).toEqual(expected);
        }
      }),
      { numRuns: runs },
    );
  });
});
