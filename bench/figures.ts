/** A measured figure: the median of its runs, with the spread (min–max). */
export interface Figure {
  readonly median: number;
  readonly min: number;
  readonly max: number;
  readonly runs: number;
}

const round = (n: number): number => Math.round(n * 10) / 10;

export function figure(samples: readonly number[]): Figure {
  const sorted = [...samples].sort((a, b) => a - b);
  return { median: round(sorted[Math.floor(sorted.length / 2)]!), min: round(sorted[0]!), max: round(sorted[sorted.length - 1]!), runs: samples.length };
}
