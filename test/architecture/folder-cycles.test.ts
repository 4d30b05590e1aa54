/**
 * The folders of src/ form no cycle: each folder (and each file directly in src/, a module of
 * its own) only imports what sits below it. `cli.ts`, the entry point, may import anything.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";

const srcRoot = path.resolve(import.meta.dirname, "../../src");
const entryPoint = "cli.ts";

/** An example import behind an edge between two modules, for the failure message. */
type Edges = Map<string, Map<string, string>>;

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith(".ts") ? [full] : [];
  });
}

/** The module a file belongs to: its top folder under src/, or the file itself at the root. */
function moduleOf(relative: string): string {
  const parts = relative.split("/");
  return parts.length > 1 ? `${parts[0] ?? ""}/` : relative;
}

function importEdges(): Edges {
  const edges: Edges = new Map();
  for (const file of sourceFiles(srcRoot)) {
    const from = moduleOf(path.relative(srcRoot, file).split(path.sep).join("/"));
    if (from === entryPoint) continue;
    const text = readFileSync(file, "utf8");
    for (const imported of ts.preProcessFile(text, true, true).importedFiles) {
      if (!imported.fileName.startsWith(".")) continue;
      const target = path.resolve(path.dirname(file), imported.fileName).replace(/\.js$/, ".ts");
      const to = moduleOf(path.relative(srcRoot, target).split(path.sep).join("/"));
      if (to === from) continue;
      const out = edges.get(from) ?? new Map<string, string>();
      if (!out.has(to)) out.set(to, `${path.relative(srcRoot, file)} imports ${imported.fileName}`);
      edges.set(from, out);
    }
  }
  return edges;
}

/** One shortest cycle through each strongly connected component of more than one module. */
function findCycles(edges: ReadonlyMap<string, ReadonlyMap<string, string>>): string[][] {
  const cycles: string[][] = [];
  const seen = new Set<string>();
  for (const start of [...edges.keys()].sort()) {
    if (seen.has(start)) continue;
    const cycle = shortestCycle(edges, start);
    if (cycle === undefined) continue;
    cycle.forEach((m) => seen.add(m));
    cycles.push(cycle);
  }
  return cycles;
}

function shortestCycle(
  edges: ReadonlyMap<string, ReadonlyMap<string, string>>,
  start: string,
): string[] | undefined {
  const parent = new Map<string, string>();
  const queue = [start];
  while (queue.length > 0) {
    const node = queue.shift() ?? start;
    for (const next of [...(edges.get(node)?.keys() ?? [])].sort()) {
      if (next === start) {
        const cycle = [node];
        while (cycle[0] !== start) cycle.unshift(parent.get(cycle[0] ?? start) ?? start);
        return [...cycle, start];
      }
      if (parent.has(next)) continue;
      parent.set(next, node);
      queue.push(next);
    }
  }
  return undefined;
}

function describeCycle(edges: Edges, cycle: readonly string[]): string {
  const steps = cycle.slice(1).map((to, i) => {
    const from = cycle[i] ?? "";
    return `  ${from} -> ${to} (${edges.get(from)?.get(to) ?? "?"})`;
  });
  return [`cycle ${cycle.join(" -> ")}:`, ...steps].join("\n");
}

describe("folder cycles", () => {
  it("finds a cycle, and only a cycle, in a small graph", () => {
    const graph = (pairs: [string, string][]): Edges => {
      const edges: Edges = new Map();
      for (const [a, b] of pairs) edges.set(a, (edges.get(a) ?? new Map<string, string>()).set(b, "x"));
      return edges;
    };
    expect(findCycles(graph([["a/", "b/"], ["b/", "c.ts"]]))).toEqual([]);
    expect(findCycles(graph([["a/", "b/"], ["b/", "c.ts"], ["c.ts", "a/"]]))).toEqual([
      ["a/", "b/", "c.ts", "a/"],
    ]);
    expect(moduleOf("plan/breaking/classify.ts")).toBe("plan/");
    expect(moduleOf("errors.ts")).toBe("errors.ts");
  });

  it("src/ has no import cycle between folders (root files each their own module)", () => {
    const edges = importEdges();
    expect(edges.size).toBeGreaterThan(10);
    const cycles = findCycles(edges);
    expect(cycles.map((c) => describeCycle(edges, c)).join("\n")).toBe("");
  });
});
