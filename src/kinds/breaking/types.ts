/**
 * What an update does to the consumers of a resource: every classified change has a JSON path
 * (as the plan's field paths are written) and a one-line reason.
 */
export type ChangeClass = "breaking" | "non-breaking" | "annotation" | "unclassified";

export interface ClassifiedChange {
  /** Dotted path into the compared spec: `definition.paths["/pets"].post`, `access_rights.shop`. */
  readonly path: string;
  readonly class: ChangeClass;
  readonly reason: string;
}

/** A breaking change as the plan's `breaking` array lists it. */
export interface BreakingChange {
  readonly path: string;
  readonly reason: string;
}

export interface Compatibility {
  /** The worst class present: breaking, then unclassified, then non-breaking, then annotation. */
  readonly verdict: ChangeClass;
  readonly changes: readonly ClassifiedChange[];
}

const rank: Record<ChangeClass, number> = { annotation: 0, "non-breaking": 1, unclassified: 2, breaking: 3 };

/** Nothing classified: the change takes nothing away (non-breaking). */
export function compatibilityOf(changes: readonly ClassifiedChange[]): Compatibility {
  const verdict =
    changes.length === 0 ? "non-breaking" : changes.reduce<ChangeClass>((worst, c) => (rank[c.class] > rank[worst] ? c.class : worst), "annotation");
  // breaking first, so a cut list still shows them
  const ordered = [...changes].sort((a, b) => rank[b.class] - rank[a.class]);
  return { verdict, changes: ordered };
}

export const breaking = (path: string, reason: string): ClassifiedChange => ({ path, class: "breaking", reason });
export const nonBreaking = (path: string, reason: string): ClassifiedChange => ({ path, class: "non-breaking", reason });
export const annotation = (path: string, reason: string): ClassifiedChange => ({ path, class: "annotation", reason });

export type Spec = Readonly<Record<string, unknown>>;

export function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === "object" && !Array.isArray(v);
}

export function field(v: unknown, ...keys: string[]): unknown {
  let cur = v;
  for (const k of keys) {
    if (!isRecord(cur)) return undefined;
    cur = cur[k];
  }
  return cur;
}
