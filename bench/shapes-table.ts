/** The repository shapes' table (bench/shapes.ts measures; docs/dev/performance.md shows it). */
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { ProcessFigures } from "./cold.js";
import type { Figure } from "./figures.js";

const here = path.dirname(fileURLToPath(import.meta.url));
export const shapesResultsPath = path.join(here, "results.shapes.json");

export interface ShapeFigures {
  readonly label: string;
  readonly files: number;
  readonly floor: ProcessFigures;
  readonly validate: ProcessFigures;
  /** `--format json`: every change with its documents (35 MB on the realistic shape). */
  readonly firstPlan: ProcessFigures;
  /** The default text format, as a person or a CI log reads it (older results lack it). */
  readonly firstPlanText?: ProcessFigures;
}

/** bench/results.shapes.json. */
export interface ShapesRun {
  readonly date: string;
  readonly runs: number;
  readonly durationSeconds: number;
  readonly machine: { readonly loadAverage: { readonly start: readonly number[]; readonly end: readonly number[] } };
  readonly shapes: readonly ShapeFigures[];
}

export const shapesMarkers = {
  start: "<!-- shapes-table:start (generated from bench/results.shapes.json by `npm run bench:table`; do not edit) -->",
  end: "<!-- shapes-table:end -->",
};

const n0 = (n: number): string => Math.round(n).toLocaleString("en-GB");
const ms = (f: Figure): string => `${n0(f.median)} ms`;
const ratio = (a: Figure, b: Figure): string => `${(a.median / b.median).toFixed(2)}×`;

/** Issue #35's targets: validate ≤ 0.6× the floor's wall, under 250 MB; a first plan ≤ 1.2× validate's wall. */
export function shapesBenchTable(run: ShapesRun): string {
  const cells = (r: readonly string[]): string => `| ${r.join(" | ")} |\n`;
  let out = cells([
    "10,000 resources, shape",
    "files",
    "floor: wall (CPU)",
    "`validate`: wall (CPU), peak RSS",
    "to the floor: wall (CPU)",
    "first `plan --dir --format json`: wall (CPU), peak RSS",
    "JSON plan to validate (wall)",
    "first `plan --dir` (text): wall (CPU)",
    "text plan to validate (wall)",
  ]);
  out += cells(["---", "---", "---", "---", "---", "---", "---", "---", "---"]);
  for (const s of run.shapes) {
    out += cells([
      s.label,
      n0(s.files),
      `${ms(s.floor.wallMs)} (${ms(s.floor.cpuMs)})`,
      `${ms(s.validate.wallMs)} (${ms(s.validate.cpuMs)}), ${n0(s.validate.peakRssMb.median)} MB`,
      `**${ratio(s.validate.wallMs, s.floor.wallMs)}** (${ratio(s.validate.cpuMs, s.floor.cpuMs)})`,
      `${ms(s.firstPlan.wallMs)} (${ms(s.firstPlan.cpuMs)}), ${n0(s.firstPlan.peakRssMb.median)} MB`,
      `**${ratio(s.firstPlan.wallMs, s.validate.wallMs)}**`,
      s.firstPlanText === undefined ? "—" : `${ms(s.firstPlanText.wallMs)} (${ms(s.firstPlanText.cpuMs)})`,
      s.firstPlanText === undefined ? "—" : `**${ratio(s.firstPlanText.wallMs, s.validate.wallMs)}**`,
    ]);
  }
  const load = run.machine.loadAverage;
  return `Run of ${run.date}:\n\n${out}\n(median of ${run.runs} runs, interleaved; targets: validate ≤ 0.6× the floor's wall and < 250 MB, a first plan ≤ 1.2× validate; ${run.durationSeconds} s in all; load average ${load.start.join(" ")} → ${load.end.join(" ")})\n`;
}
