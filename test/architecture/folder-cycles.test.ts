/**
 * The folders of src/ form no cycle: each folder (and each file directly in src/, a module of
 * its own) only imports what sits below it. `cli.ts`, the entry point, may import anything.
 */
import { describe, expect, it } from "vitest";
import { importEdges, moduleOf } from "./import-graph.js";
import type { Edges } from "./import-graph.js";

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

function shortestCycle(edges: ReadonlyMap<string, ReadonlyMap<string, string>>, start: string): string[] | undefined {
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
