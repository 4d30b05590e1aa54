/**
 * The folders of src/ form no cycle: each folder (and each file directly in src/, a module of
 * its own) only imports what sits below it. `cli.ts`, the entry point, may import anything.
 */
import { describe, expect, it } from "vitest";
import { describeCycle, findCycles } from "./graph-cycles.js";
import type { Edges } from "./graph-cycles.js";
import { importEdges, moduleOf } from "./import-graph.js";

describe("folder cycles", () => {
  it("finds a cycle, and only a cycle, in a small graph", () => {
    const graph = (pairs: [string, string][]): Edges => {
      const edges: Edges = new Map();
      for (const [a, b] of pairs) edges.set(a, (edges.get(a) ?? new Map<string, string>()).set(b, "x"));
      return edges;
    };
    expect(
      findCycles(
        graph([
          ["a/", "b/"],
          ["b/", "c.ts"],
        ]),
      ),
    ).toEqual([]);
    expect(
      findCycles(
        graph([
          ["a/", "b/"],
          ["b/", "c.ts"],
          ["c.ts", "a/"],
        ]),
      ),
    ).toEqual([["a/", "b/", "c.ts", "a/"]]);
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
