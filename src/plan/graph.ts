/** Orders resources in waves: each wave depends only on earlier ones. */

export interface GraphNode {
  readonly id: string;
  readonly dependsOn: readonly string[];
}

export type WavesResult = { readonly ok: true; readonly waves: string[][] } | { readonly ok: false; readonly cycle: string[] };

/** Kahn's algorithm by levels; ids in a wave are sorted. References to unknown ids are ignored. */
export function planWaves(nodes: readonly GraphNode[]): WavesResult {
  const ids = new Set(nodes.map((n) => n.id));
  const deps = new Map(nodes.map((n) => [n.id, new Set(n.dependsOn.filter((d) => ids.has(d) && d !== n.id))]));
  const selfLoop = nodes.find((n) => n.dependsOn.includes(n.id));
  if (selfLoop !== undefined) return { ok: false, cycle: [selfLoop.id, selfLoop.id] };
  const waves: string[][] = [];
  const done = new Set<string>();
  while (done.size < ids.size) {
    const wave = [...deps.entries()]
      .filter(([id, d]) => !done.has(id) && [...d].every((x) => done.has(x)))
      .map(([id]) => id)
      .sort();
    if (wave.length === 0) return { ok: false, cycle: findCycle(deps, done) };
    for (const id of wave) done.add(id);
    waves.push(wave);
  }
  return { ok: true, waves };
}

function findCycle(deps: Map<string, Set<string>>, done: Set<string>): string[] {
  const start = [...deps.keys()].filter((id) => !done.has(id)).sort()[0]!;
  const path: string[] = [];
  const seen = new Map<string, number>();
  let current = start;
  while (!seen.has(current)) {
    seen.set(current, path.length);
    path.push(current);
    current = [...deps.get(current)!].filter((d) => !done.has(d)).sort()[0]!;
  }
  return [...path.slice(seen.get(current)), current];
}
