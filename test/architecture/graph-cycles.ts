/** Cycles in a directed graph whose edges each carry an example (the import behind it). */
export type Edges = Map<string, Map<string, string>>;

/** One shortest cycle through each node not yet on a reported cycle, in name order. */
export function findCycles(edges: ReadonlyMap<string, ReadonlyMap<string, string>>): string[][] {
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

/** The cycle and the example behind each of its edges, one line each. */
export function describeCycle(edges: Edges, cycle: readonly string[]): string {
  const steps = cycle.slice(1).map((to, i) => {
    const from = cycle[i] ?? "";
    return `  ${from} -> ${to} (${edges.get(from)?.get(to) ?? "?"})`;
  });
  return [`cycle ${cycle.join(" -> ")}:`, ...steps].join("\n");
}
