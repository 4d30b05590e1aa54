/** The start-up part's table (bench/startup.ts measures; docs/dev/performance.md shows it). */
import type { Figure } from "./figures.js";
import type { StartupFigures } from "./startup.js";

/** Each figure's target as a multiple of `node -e 0`'s: CPU (issue #35) and wall time (issue #60); the others are measured only. */
const targets: Readonly<Record<string, { readonly cpu?: number; readonly wall?: number }>> = {
  "`gatesync --help`": { cpu: 2.5, wall: 1.3 },
  "`gatesync validate` of the examples (17 resources)": { cpu: 4, wall: 2.5 },
  "`gatesync plan` of the examples against their state": { cpu: 5 },
};

/** The targets a command has, and whether its figures meet each. */
function targetCells(s: StartupFigures, c: StartupFigures["commands"][number]): [string, string] {
  const target = targets[c.label];
  if (target === undefined) return ["", ""];
  const checks = [
    ...(target.cpu === undefined ? [] : [{ text: `≤ ${target.cpu}× CPU`, met: c.cpuMs.median / s.node.cpuMs.median <= target.cpu }]),
    ...(target.wall === undefined ? [] : [{ text: `≤ ${target.wall}× wall`, met: c.wallMs.median / s.node.wallMs.median <= target.wall }]),
  ];
  return [checks.map((k) => k.text).join(", "), checks.map((k) => (k.met ? "yes" : "**no**")).join(", ")];
}

const n0 = (n: number): string => Math.round(n).toLocaleString("en-GB");
const show = (f: Figure, unit = "ms"): string => `${n0(f.median)} ${unit} (${n0(f.min)}–${n0(f.max)})`;
const times = (a: Figure, b: Figure): string => `${(a.median / b.median).toFixed(2)}×`;

/** The figures as a Markdown table: each command's CPU and wall time, and both as multiples of `node -e 0`'s. */
export function startupTable(s: StartupFigures, footer: string): string {
  const cells = (r: readonly string[]): string => `| ${r.join(" | ")} |\n`;
  let out = cells(["command (cold process)", "CPU", "wall", "peak RSS", "CPU (wall) to `node -e 0`", "target", "met"]);
  out += cells(["---", "---", "---", "---", "---", "---", "---"]);
  out += cells(["`node -e 0`", show(s.node.cpuMs), show(s.node.wallMs), show(s.node.peakRssMb, "MB"), "1×", "", ""]);
  for (const c of s.commands) {
    out += cells([
      c.label,
      show(c.cpuMs),
      show(c.wallMs),
      show(c.peakRssMb, "MB"),
      `**${times(c.cpuMs, s.node.cpuMs)}** (${times(c.wallMs, s.node.wallMs)})`,
      ...targetCells(s, c),
    ]);
  }
  return `${out}\n${footer}\n`;
}
