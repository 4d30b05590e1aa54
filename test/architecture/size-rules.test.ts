/**
 * The size rules, each offender named with its size and place:
 * - no hand-written code file (src/, test/, bench/, scripts/, bin/, ui/) over 350 lines;
 * - no function in src/ over 60 lines, first line to last (./function-spans.ts);
 * - no folder of src/ (src/ itself included) holding more than 20 files directly: past that a
 *   folder wants subfolders by concept;
 * - no import circle between the files of one folder of src/ (a top folder with its subfolders:
 *   circles between folders are folder-cycles.test.ts's).
 *
 * An `import type` counts: it runs nothing, so it makes no load-order trap, but the rule is about
 * reading — each file of a folder can be understood from the files it imports, without the ones that
 * import it — and a type is as much a part of that as a function (issue 45 counted circles so).
 * Where one file's types are truly the other's (the importer cannot be read without them, and
 * moving them would only make a third file both need), `typeCircles` below lists the `import type`
 * with its reason, and the import carries a `// type circle: …` comment saying the same. A runtime
 * import can never be listed.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { functionSpans } from "./function-spans.js";
import { describeCycle, findCycles } from "./graph-cycles.js";
import type { Edges } from "./graph-cycles.js";
import { fileImports } from "./import-graph.js";
import type { FileImport } from "./import-graph.js";
import { handWrittenFiles, isGenerated, projectRoot } from "./source-files.js";

const fileLimit = 350;
const folderLimit = 20;
const functionLimit = 60;

/** `import type` edges allowed to close a circle: from → to, and why the types are truly `to`'s. */
const typeCircles: readonly { from: string; to: string; why: string }[] = [
  {
    from: "kinds/kind.ts",
    to: "kinds/registry.ts",
    why: "KindName is the union of the names the registry lists: written in kind.ts, it would be a second list of the kinds",
  },
];

const lineCount = (text: string): number => text.split("\n").length - (text.endsWith("\n") ? 1 : 0);
const read = (relative: string): string => readFileSync(path.join(projectRoot, relative), "utf8");
const folderOf = (srcRelative: string): string | undefined => (srcRelative.includes("/") ? srcRelative.split("/")[0] : undefined);

function longFiles(): string[] {
  return handWrittenFiles().flatMap((file) => {
    const lines = lineCount(read(file));
    return lines > fileLimit ? [`${file}: ${lines} lines (limit ${fileLimit})`] : [];
  });
}

function longFunctions(): string[] {
  return handWrittenFiles(["src"]).flatMap((file) =>
    functionSpans(file, read(file))
      .filter((span) => span.lines > functionLimit)
      .map((span) => `${file}:${span.line} ${span.name}: ${span.lines} lines (limit ${functionLimit})`),
  );
}

/** Each folder of src/ holding more than `folderLimit` files directly (its subfolders not counted). */
function crowdedFolders(): string[] {
  const counts = new Map<string, number>();
  for (const file of handWrittenFiles(["src"])) {
    const folder = path.posix.dirname(file);
    counts.set(folder, (counts.get(folder) ?? 0) + 1);
  }
  return [...counts].filter(([, n]) => n > folderLimit).map(([folder, n]) => `${folder}/: ${n} files (limit ${folderLimit})`);
}

const isListed = (i: FileImport): boolean => i.typeOnly && typeCircles.some((c) => c.from === i.from && c.to === i.to);

/** The imports between files of one folder, but the listed `import type`s, as a graph. */
function folderGraph(imports: readonly FileImport[]): Edges {
  const edges: Edges = new Map();
  for (const i of imports) {
    if (folderOf(i.from) === undefined || folderOf(i.from) !== folderOf(i.to) || isListed(i)) continue;
    const out = edges.get(i.from) ?? new Map<string, string>();
    const kind = i.typeOnly ? "import type" : "import";
    if (!out.has(i.to) || !i.typeOnly) out.set(i.to, `${kind} at src/${i.from}:${i.line}`);
    edges.set(i.from, out);
  }
  return edges;
}

/** The `//` comment lines right above a 1-based line, joined. */
function commentAbove(lines: readonly string[], line: number): string {
  let first = line - 1;
  while (first > 0 && (lines[first - 1] ?? "").trimStart().startsWith("//")) first--;
  return lines
    .slice(first, line - 1)
    .map((l) => l.trim())
    .join(" ");
}

/** A listed circle must still be an `import type` (all of them, from → to) with its comment above it. */
function unjustifiedTypeCircles(imports: readonly FileImport[]): string[] {
  return typeCircles.flatMap(({ from, to }) => {
    const found = imports.filter((i) => i.from === from && i.to === to);
    if (found.length === 0) return [`src/${from} no longer imports src/${to}: remove it from typeCircles`];
    const lines = read(`src/${from}`).split("\n");
    return found.flatMap((i) => {
      if (!i.typeOnly) return [`src/${from}:${i.line} imports src/${to} at run time: a runtime circle cannot be listed`];
      return commentAbove(lines, i.line).startsWith("// type circle: ")
        ? []
        : [`src/${from}:${i.line} has no "// type circle: <why>" comment above its import`];
    });
  });
}

describe("the size rules", () => {
  it("measure what they say (a small file of each kind of function)", () => {
    const text = [
      "export function declared() {\n  return 1;\n}",
      "class Box {\n  constructor() {\n    void 0;\n  }\n  get size() {\n    return 1;\n  }\n  open() {}\n}",
      "const arrow = () =>\n  1;",
      "const object = { expression: function () {\n  return 2;\n} };",
      "declare function overload(): void;",
    ].join("\n");
    expect(functionSpans("example.ts", text).map((s) => `${s.name}@${s.line}:${s.lines}`)).toEqual([
      "declared@1:3",
      "Box.constructor@5:3",
      "Box.size@8:3",
      "Box.open@11:1",
      "arrow@13:2",
      "expression@15:3",
    ]);
    expect(lineCount("a\nb\n")).toBe(2);
    expect(lineCount("a\nb")).toBe(2);
    expect(isGenerated("src/validate/compiled/openapi-3-1.ts")).toBe(true);
    expect(handWrittenFiles()).toContain("test/architecture/size-rules.test.ts");
    expect(handWrittenFiles()).toContain("ui/app.js");
    expect(handWrittenFiles().filter(isGenerated)).toEqual([]);
  });

  it(`no hand-written code file is over ${fileLimit} lines`, () => {
    expect(longFiles()).toEqual([]);
  });

  it(`no folder of src/ holds more than ${folderLimit} files directly`, () => {
    expect(crowdedFolders()).toEqual([]);
  });

  it(`no function in src/ is over ${functionLimit} lines`, () => {
    expect(longFunctions()).toEqual([]);
  });

  it("tells a runtime circle from a type-only import inside a folder", () => {
    const imports = fileImports();
    expect(imports.length).toBeGreaterThan(100);
    expect(imports).toContainEqual(expect.objectContaining({ from: "plan/breaking/classify.ts", typeOnly: true }));
    expect(imports.some((i) => !i.typeOnly && folderOf(i.from) === folderOf(i.to))).toBe(true);
  });

  it("no two files of one folder of src/ import each other, round a circle", () => {
    const imports = fileImports();
    expect(unjustifiedTypeCircles(imports)).toEqual([]);
    const edges = folderGraph(imports);
    expect(findCycles(edges).map((cycle) => describeCycle(edges, cycle))).toEqual([]);
  });
});
