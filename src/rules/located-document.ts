/**
 * A document gatesync already parsed, handed to Spectral as its parsed-document input
 * (spectral-core's IParsedResult: the value, no parser diagnostics, and the function Spectral
 * calls for the range of a finding's path). Spectral never parses the file again, and a
 * position is computed only when Spectral asks for one — once per finding — by gatesync's own
 * locator (the syntax trees its reader kept), and kept for the finding gatesync reports.
 *
 * Why give Spectral positions at all: it sorts each document's findings by position, then by
 * rule name with a numeric `localeCompare`, which builds a collator per comparison. Without
 * positions every comparison fell through to that (~1.5% of a thread's time on the benchmark's
 * OpenAPI documents). With positions, its sort is cheap; `inSpectralOrder` then puts the findings
 * back into the order Spectral gives without positions (rule, then path; ties as found), so
 * what gatesync reports does not depend on it.
 */

/** A line and column (1-based), or none when the path is not found in the file. */
export interface Position {
  readonly line?: number;
  readonly column?: number;
}

interface Range {
  readonly start: { readonly line: number; readonly character: number };
  readonly end: { readonly line: number; readonly character: number };
}

type SpectralPath = ReadonlyArray<string | number>;

/** What Spectral takes as an already-parsed document (a plain object: Spectral checks for one). */
export interface ParsedInput {
  readonly parsed: { readonly data: unknown; readonly diagnostics: readonly never[] };
  readonly source: string;
  readonly getLocationForJsonPath: (parsed: unknown, path: SpectralPath) => { readonly range: Range } | undefined;
}

/** The document for Spectral, and the positions it asked for (by path), for the findings. */
export interface LocatedDocument {
  readonly input: ParsedInput;
  /** The position of a finding's path (computed now if Spectral did not ask for it). */
  readonly positionOf: (path: SpectralPath) => Position;
  /**
   * Findings in the order Spectral gives them when it knows no position (spectral-core's
   * compareResults with equal ranges: rule name, numeric; the path joined by commas; ties in
   * the order found). Spectral asks for a finding's position as it records the finding, so the
   * order of the asking is the order found.
   */
  readonly inSpectralOrder: <R extends Ordered>(results: readonly R[]) => R[];
}

interface Ordered {
  readonly code: string | number;
  readonly path: SpectralPath;
}

/** Made once: `localeCompare` with options makes a collator per call. */
const byRule = new Intl.Collator(undefined, { numeric: true });
const byPath = new Intl.Collator();

/** `where`: the position of a path of the value in its file (the caller's locator). */
export function locatedDocument(value: unknown, source: string, where: (path: SpectralPath) => Position): LocatedDocument {
  // by the path array itself: Spectral records a finding with the very array it asked the
  // range of (one ask per finding, in the order found), so no key is built
  const known = new Map<SpectralPath, { readonly at: Position; readonly asked: number }>();
  const lookUp = (path: SpectralPath): { readonly at: Position; readonly asked: number } => {
    let entry = known.get(path);
    if (entry === undefined) {
      entry = { at: where(path), asked: known.size };
      known.set(path, entry);
    }
    return entry;
  };
  const input: ParsedInput = {
    parsed: { data: value, diagnostics: [] },
    source,
    getLocationForJsonPath: (_parsed, path) => {
      const { at } = lookUp(path);
      if (at.line === undefined) return undefined;
      const point = { line: at.line - 1, character: (at.column ?? 1) - 1 };
      return { range: { start: point, end: point } };
    },
  };
  const inSpectralOrder = <R extends Ordered>(results: readonly R[]): R[] => {
    const keyed = results.map((r) => ({ r, code: String(r.code), path: r.path.join(), asked: known.get(r.path)?.asked ?? -1 }));
    keyed.sort((a, b) => byRule.compare(a.code, b.code) || byPath.compare(a.path, b.path) || a.asked - b.asked);
    return keyed.map((k) => k.r);
  };
  return { input, positionOf: (path) => lookUp(path).at, inSpectralOrder };
}
