/**
 * The value-only parse (src/load/fast-yaml.ts) is an accelerator, not a second dialect: for any
 * text, `parseYaml` gives exactly what `yaml`'s full parse gives — the same values, document
 * indexes and start lines, the same located findings — and the fast path answers for the files
 * repositories hold. Counterexamples found while building it are kept as examples.
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { Document, stringify, visit } from "yaml";
import { describe, expect, it } from "vitest";
import { parseFast } from "../../src/load/fast-yaml.js";
import { defaultReadLimits } from "../../src/load/parsed-yaml.js";
import { parseYaml, parseYamlFully } from "../../src/load/yaml-reader.js";
import { projectRoot } from "../helpers/temp-repo.js";
import { yamlTrickyValue as value } from "../helpers/yaml-values.js";

const runs = Number(process.env.GATESYNC_FUZZ_RUNS ?? 60);

const same = (text: string): void => {
  expect(parseYaml(text, "f.yaml"), JSON.stringify(text)).toStrictEqual(parseYamlFully(text, "f.yaml"));
};

/** Those values written as YAML in the styles `yaml` writes (block, flow, every string style, folded lines). */
const written = fc
  .tuple(
    value,
    fc.record({
      lineWidth: fc.constantFrom(0, 20, 80),
      indent: fc.constantFrom(2, 4),
      defaultStringType: fc.constantFrom("PLAIN", "QUOTE_DOUBLE", "QUOTE_SINGLE", "BLOCK_LITERAL", "BLOCK_FOLDED"),
      defaultKeyType: fc.constantFrom(null, "PLAIN", "QUOTE_DOUBLE"),
      collectionStyle: fc.constantFrom("any", "block", "flow"),
      indentSeq: fc.boolean(),
    }),
  )
  .map(([v, options]) => stringify(v, null, options));

/**
 * Those values written with the core `!!str` tag on some of their scalars, keys and values (a
 * number, a boolean or null so tagged is read as its text), as `yaml` writes tags.
 */
const tagged = fc
  .tuple(
    value,
    fc.integer({ min: 0, max: 2 ** 30 }),
    fc.record({
      lineWidth: fc.constantFrom(0, 20, 80),
      defaultStringType: fc.constantFrom("PLAIN", "QUOTE_DOUBLE", "BLOCK_LITERAL"),
      collectionStyle: fc.constantFrom("any", "block", "flow"),
    }),
  )
  .map(([v, mask, options]) => {
    const doc = new Document(v);
    let i = 0;
    visit(doc, {
      Scalar(_, node) {
        if ((mask >> (i++ % 30)) & 1) node.tag = "tag:yaml.org,2002:str";
      },
    });
    return doc.toString(options);
  });

const json = fc.tuple(value, fc.constantFrom(0, 2, "\t")).map(([v, space]) => JSON.stringify(v, null, space));

/** Lines of YAML-looking fragments: most are errors somewhere, which both paths must report alike. */
const fragment = fc.constantFrom(
  ...[
    "a",
    "key",
    "true",
    "null",
    "~",
    "0o17",
    "1.5",
    ".NaN",
    "<<",
    "__proto__",
    "@x",
    "x#y",
    "a b",
    "%x",
    "http://a/?d={e}",
    "'q'",
    '"dq\\t\\u0041"',
    '"bad\\q"',
  ],
  ...["'it''s'", '""', "|", ">-", "|+", ">2", "[a, b]", "{a: 1}", "[]", "{a, b}", "[a: 1]", "&anc", "*anc", "!!str", "!local", "? ", "#c", "\t", "ä"],
  ...[":", "?x", "-x", ",", "]", "}", "[", "{", '"multi\n line"', "'p\n q'", "...", "---", "--- x", "- -", "-", "x".repeat(1030), " ".repeat(1030)],
);
const line = fc
  .tuple(
    fc.constantFrom("", " ", "  ", "    ", "\t", "- ", "  - ", "- - "),
    fc.array(fragment, { maxLength: 4 }),
    fc.constantFrom(" ", ": ", ", ", ""),
    fc.constantFrom("", ":", ": ", " :", ":\t", " # c", "\r"),
  )
  .map(([indent, words, sep, end]) => indent + words.join(sep) + end);
const soup = fc.array(line, { maxLength: 12 }).map((lines) => lines.join("\n"));

describe("the value-only parse gives what yaml gives", () => {
  it("for values written as YAML in any style, and as JSON", () => {
    fc.assert(fc.property(fc.oneof(written, json), same), { numRuns: runs * 40 });
  });

  it("for values whose keys and values carry the core !!str tag", () => {
    fc.assert(fc.property(tagged, same), { numRuns: runs * 40 });
  });

  it("for !!str-tagged values through the fast path", () => {
    // the tag alone no longer sends a file to the full parse
    expect(parseFast("!!str a: !!str 1\n!!str b: [!!str true, !!str ~]\n!!str c: !!str ''\n", defaultReadLimits)).toStrictEqual([
      { index: 0, value: { a: "1", b: ["true", "~"], c: "" }, line: 1 },
    ]);
  });

  it("for several documents in one file", () => {
    fc.assert(
      fc.property(fc.array(fc.oneof(written, soup), { maxLength: 4 }), (docs) => same(docs.join("\n---\n"))),
      { numRuns: runs * 20 },
    );
  });

  it("for YAML-looking text, errors and their positions included", () => {
    fc.assert(fc.property(soup, same), { numRuns: runs * 40 });
  });

  it.each([
    ["an empty entry of a nested sequence", "- -  # c\n- 1e3\n"],
    ["a block scalar's indentation indicator at the top", "|1-\n ,$<&\n"],
    ["a tab as indentation", "\ta b\n- - 1.5"],
    ["an empty tagged node", "!!str:\t\n---\n2\n"],
    ["a less indented entry after an indented top-level one", "  - \r\n  # c\n- - y: "],
    ["a block mapping on the `---` line", "--- 1:2:"],
    ["a lone carriage return after JSON", " {}\r"],
    ["a quoted scalar's continuation line too little indented", '- - "multi\n line"'],
    ["a comment right after a quoted scalar", '""#c'],
    ["a comment right after a flow collection", "{a: 1}#c"],
    ["a comment right after a document marker", "---#c\n...#c\n"],
    ["a comment right after a quoted value in a mapping and a flow sequence", "a: 'x'#c\nb: [\"y\"#c]\n"],
    ["a duplicate key", "a: 1\nb: 2\na: 3\n"],
    ["a duplicate key in JSON", '{"a": 1, "b": {"c": 2, "c": 3}}'],
    ["a null key", "~: a\nnull: b\n"],
    ["a collection as a key", "[a, b]: c\n? {x: 1}\n: d\n"],
    ["merge keys and timestamps under %YAML 1.1", "%YAML 1.1\n---\nbase: &b {x: 1}\nuse: {<<: *b}\nwhen: 2001-12-14\n"],
    ["an alias bomb", `a: &a [x, x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]\n`],
    ["an integer past 2^53 in JSON", '{"n": 123456789012345678901234567890}'],
    [
      "!!str on a collection, other core tags, a verbatim tag, !!str with no space",
      "a: !!str [x]\nb: !!str {c: 1}\nd: !!int 1\ne: !<tag:yaml.org,2002:str> f\ng: !!strx h\n[!!str, a]: 1\n",
    ],
    ["!!str on an empty node, a comment, the next line and a duplicate key", "!!str : x\na: !!str # c\n  b\n!!str 1: x\n1: y\n"],
    ["!!str before an empty key", "a: !!str :"],
    ["!!str before a sequence entry", "b: !!str - x\n"],
    ["!!str before an anchor", "d: !!str &a x\n"],
    ["a key past 1024 characters", `${"k".repeat(1100)}: v\n`],
  ])("for %s", (_, text) => same(text));

  it("nested up to the depth limit and past it", () => {
    for (const depth of [defaultReadLimits.maxDepth - 1, defaultReadLimits.maxDepth, defaultReadLimits.maxDepth + 1]) {
      same(`${"[".repeat(depth)}1${"]".repeat(depth)}`);
      same(Array.from({ length: depth }, (_, i) => `${"  ".repeat(i)}k${i}:`).join("\n") + " v\n");
    }
  });
});

/** Every YAML and JSON file of the shared corpus and the examples. */
function repositoryFiles(): string[] {
  const found: string[] = [];
  for (const dir of ["test/fixtures/shared", "examples"]) {
    for (const entry of readdirSync(path.join(projectRoot, dir), { recursive: true, withFileTypes: true })) {
      if (entry.isFile() && /\.(ya?ml|json)$/.test(entry.name)) found.push(path.join(entry.parentPath, entry.name));
    }
  }
  return found;
}

describe("the shared corpus and the examples", () => {
  const files = repositoryFiles();

  it("parse alike through both paths, file by file", () => {
    expect(files.length).toBeGreaterThan(50);
    for (const file of files) {
      const text = readFileSync(file, "utf8");
      expect(parseYaml(text, file), file).toStrictEqual(parseYamlFully(text, file));
    }
  });

  it("go through the fast path where they are valid YAML without anchors", () => {
    const answered = files.filter((f) => parseFast(readFileSync(f, "utf8"), defaultReadLimits) !== undefined);
    // the corpus's `fail` documents and the few with anchors or explicit keys are the full parse's
    expect(answered.length / files.length).toBeGreaterThan(0.8);
    const corpus = files.filter((f) => f.includes(`${path.sep}pass${path.sep}`));
    expect(corpus.filter((f) => !answered.includes(f))).toStrictEqual([]);
  });
});
