/** The benchmark's table: every figure beside its target, printed as Markdown (the README's form). */
import type { ColdFigures, ProcessFigures } from "./cold.js";
import type { Figure } from "./figures.js";
import type { ScaleFigures } from "./scale.js";
import type { RulesFigures } from "./rules.js";
import type { SandboxThroughput } from "./sandbox-throughput.js";

export interface SizeResult {
  readonly loadValidate: { readonly validate: Figure; readonly floor: Figure };
  readonly plan: { readonly matching: Figure; readonly onePercent: Figure };
  readonly daemon: { readonly full: Figure; readonly noop: Figure; readonly noopCalls: number; readonly oneFile: Figure };
  readonly peakRssMb: Figure;
}

interface ApplyFigures {
  readonly batched: { readonly seconds: Figure; readonly calls: number };
  readonly direct: { readonly seconds: Figure; readonly calls: number };
  readonly batchedPostgres?: { readonly seconds: Figure; readonly calls: number };
}

export interface Row {
  readonly figure: string;
  readonly at1k: string;
  readonly at10k: string;
  readonly at100k: string;
  readonly target: string;
  readonly met: boolean | undefined;
}

export interface TableInput {
  readonly perSize: Record<number, SizeResult>;
  readonly sharedDocs: { readonly validate: Figure; readonly floor: Figure };
  readonly cold: ColdFigures;
  readonly coldStateRecords: number;
  readonly scale: readonly ScaleFigures[];
  readonly apply: ApplyFigures;
  readonly sandbox: SandboxThroughput;
  readonly rules?: RulesFigures;
}

const n0 = (n: number): string => Math.round(n).toLocaleString("en-GB");
const show = (f: Figure, unit = "ms"): string => `${n0(f.median)} ${unit} (${n0(f.min)}–${n0(f.max)})`;
const showS = (f: Figure): string => `${f.median} s (${f.min}–${f.max})`;
const fixed = (n: number, digits = 2): number => Number(n.toFixed(digits));
/** Time per resource may grow this much from 10,000 to 100,000 and still count as linear (run-to-run noise). */
const maxPerResource = 1.1;
const row = (figure: string, cells: Partial<Pick<Row, "at1k" | "at10k" | "at100k">>, target = "", met?: boolean): Row => ({
  figure,
  at1k: cells.at1k ?? "",
  at10k: cells.at10k ?? "",
  at100k: cells.at100k ?? "",
  target,
  met,
});

function inProcessRows(at: (n: number) => SizeResult, shared: TableInput["sharedDocs"]): Row[] {
  const ratio = (n: number): number => fixed(at(n).loadValidate.validate.median / at(n).loadValidate.floor.median);
  const planShare = (n: number, k: "matching" | "onePercent"): number => fixed((at(n).plan[k].median / at(n).loadValidate.validate.median) * 100, 1);
  const oneFileShare = (n: number): number => fixed((at(n).daemon.oneFile.median / at(n).daemon.full.median) * 100, 1);
  const both = (f: (n: number) => string): Partial<Row> => ({ at1k: f(1000), at10k: f(10000) });
  const sharedRatio = fixed(shared.validate.median / shared.floor.median);
  return [
    row(
      "1. load + validate, in process (every API its own document)",
      both((n) => show(at(n).loadValidate.validate)),
    ),
    row(
      "   floor: the same files parsed by `yaml` alone",
      both((n) => show(at(n).loadValidate.floor)),
    ),
    row(
      "   ratio to the floor",
      both((n) => `${ratio(n)}×`),
      "≤ 1.5×",
      ratio(10000) <= 1.5,
    ),
    row("   the old case: 5 documents shared by all APIs (ratio)", { at10k: `${show(shared.validate)} / ${show(shared.floor)} = ${sharedRatio}×` }),
    row(
      "2. plan, state matches",
      both((n) => `${show(at(n).plan.matching)} = ${planShare(n, "matching")}%`),
      "≤ 20% of load + validate",
      planShare(10000, "matching") <= 20,
    ),
    row(
      "   plan, 1% changed",
      both((n) => `${show(at(n).plan.onePercent)} = ${planShare(n, "onePercent")}%`),
      "≤ 20% of load + validate",
      planShare(10000, "onePercent") <= 20,
    ),
    row(
      "3. no-op daemon run (commit unchanged; every API its own document)",
      both((n) => `${show(at(n).daemon.noop)}, ${at(n).daemon.noopCalls} calls`),
      "< 50 ms, 0 calls",
      at(10000).daemon.noop.median < 50 && at(10000).daemon.noopCalls === 0,
    ),
    row(
      "   full daemon run (fetch, load, plan, apply everything)",
      both((n) => show(at(n).daemon.full)),
    ),
    row(
      "4. one-file change run (10 resources change)",
      both((n) => `${show(at(n).daemon.oneFile)} = ${oneFileShare(n)}%`),
      "< 10% of a full run",
      oneFileShare(10000) < 10,
    ),
    row(
      "6. peak RSS, load + validate + plan (compiled, in one process)",
      both((n) => show(at(n).peakRssMb, "MB")),
      "< 250 MB",
      at(10000).peakRssMb.median < 250,
    ),
  ];
}

export function coldRows(cold: ColdFigures, records: number): Row[] {
  const floor = cold.floor.wallMs.median;
  const ratio = (f: ProcessFigures): number => fixed(f.wallMs.median / floor);
  const cpu = (f: ProcessFigures): number => fixed(f.cpuMs.median / cold.floor.cpuMs.median);
  const cell = (f: ProcessFigures): string => `${show(f.wallMs)} wall, ${show(f.cpuMs)} CPU, ${show(f.peakRssMb, "MB")}`;
  const rows = [
    row("8. cold process: floor (`yaml` parse, one thread)", { at10k: cell(cold.floor) }),
    row(
      "   cold `gatesync validate`: wall (CPU) to the floor",
      { at10k: `${cell(cold.validate)} = **${ratio(cold.validate)}×** (${cpu(cold.validate)}× CPU)` },
      "≤ 1.0× wall, < 250 MB",
      ratio(cold.validate) <= 1.0 && cold.validate.peakRssMb.median < 250,
    ),
  ];
  if (cold.plan !== undefined) {
    rows.push(
      row(
        `   cold \`gatesync plan --dir\`, ${n0(records)}-record state`,
        { at10k: `${cell(cold.plan)} = **${ratio(cold.plan)}×** (${cpu(cold.plan)}× CPU)` },
        "≤ 1.2× wall, < 250 MB",
        ratio(cold.plan) <= 1.2 && cold.plan.peakRssMb.median < 250,
      ),
    );
  }
  return rows;
}

/** Governance rules (docs/user/rules.md): cold validate with spectral:oas recommended and five resource rules, to the same without rules. */
export function rulesRows(rules: RulesFigures): Row[] {
  const wall = fixed(rules.with.wallMs.median / rules.without.wallMs.median);
  const cpu = fixed(rules.with.cpuMs.median / rules.without.cpuMs.median);
  const cell = (f: ProcessFigures): string => `${show(f.wallMs)} wall, ${show(f.cpuMs)} CPU, ${show(f.peakRssMb, "MB")}`;
  return [
    row("10. cold `gatesync validate`, no rules", { at10k: cell(rules.without) }),
    row(
      "   with rules: spectral:oas recommended + 5 resource rules",
      { at10k: `${cell(rules.with)} = **${wall}×** (${cpu}× CPU), ${n0(rules.findings)} findings` },
      "≤ 1.5× wall",
      wall <= 1.5,
    ),
    ...(rules.warm === undefined
      ? []
      : [
          row("   with rules again, findings cache in place", {
            at10k: `${cell(rules.warm)} = **${fixed(rules.warm.wallMs.median / rules.without.wallMs.median)}×** (${fixed(rules.warm.cpuMs.median / rules.without.cpuMs.median)}× CPU)`,
          }),
        ]),
    ...(rules.spectral === undefined ? [] : spectralFloorRows(rules)),
  ];
}

/**
 * Spectral alone, one thread: its CPU time spread over both cores at best is the least wall time
 * the rules can add — beside the 0.5× of a validate without rules that the 1.5× target leaves them.
 */
function spectralFloorRows(rules: RulesFigures): Row[] {
  const floor = rules.spectral!;
  const allowance = rules.without.wallMs.median * 0.5;
  const least = (f: ProcessFigures): string =>
    `${show(f.cpuMs)} CPU: at least ${n0(f.cpuMs.median / 2)} ms of wall on 2 cores = **${fixed(f.cpuMs.median / 2 / allowance)}×** the ${n0(allowance)} ms the target leaves`;
  return [
    row("   Spectral alone (no gatesync), as it ships", { at10k: least(floor.asShipped) }),
    row("   Spectral alone, its per-document compilations paid once", { at10k: least(floor.speedUps) }),
  ];
}

type ScaleCommand = "floor" | "validate" | "plan" | "apply";

const sandboxPeak = (s: ScaleFigures): string => show(s.sandboxPeakRssMb, "MiB");

/**
 * 10,000 → 100,000: each command's wall time and peak RSS, the growth of its time as a ratio
 * and per resource (flagged when super-linear), and its peak against the Kubernetes manifest's
 * 512 MiB limit — in every run, since one run over it is a killed pod.
 */
export function scaleRows(scale: readonly ScaleFigures[]): Row[] {
  const [small, large] = scale;
  if (small === undefined || large === undefined) return [];
  const linear = large.resources / small.resources;
  const growth = (k: ScaleCommand): number => fixed(large[k].wallMs.median / small[k].wallMs.median, 1);
  const perResource = (k: ScaleCommand): number => fixed(large[k].wallMs.median / small[k].wallMs.median / linear, 2);
  const oom = (s: ScaleFigures, k: ScaleCommand): number => (k === "floor" ? 0 : s.outOfMemory[k]);
  const cell = (s: ScaleFigures, k: ScaleCommand): string =>
    `${show(s[k].wallMs)}, ${show(s[k].peakRssMb, "MiB")}${oom(s, k) > 0 ? `, **out of memory in ${oom(s, k)} of ${s.runs} runs**` : ""}`;
  const grown = (k: ScaleCommand): string =>
    `; time ×${growth(k)}, per resource ×${perResource(k)}${perResource(k) > maxPerResource ? " **super-linear**" : ""}`;
  const met = (k: ScaleCommand): boolean => oom(large, k) === 0 && large[k].peakRssMb.max < 512 && perResource(k) <= maxPerResource;
  const target = `completes, < 512 MiB in every run; time per resource ≤ ×${maxPerResource}`;
  const line = (label: string, k: "validate" | "plan"): Row => row(label, { at10k: cell(small, k), at100k: `${cell(large, k)}${grown(k)}` }, target, met(k));
  const applied = (s: ScaleFigures): string => `${n0(s.apply.applied)} of ${n0(s.resources)} applied`;
  return [
    row(`9. growth, cold processes (median of ${large.runs} runs; gatesync's inside: ${large.memoryLimit}): floor`, {
      at10k: cell(small, "floor"),
      at100k: `${cell(large, "floor")}${grown("floor")}`,
    }),
    line("   `gatesync validate`", "validate"),
    line("   first `gatesync plan --dir` (empty state)", "plan"),
    row(
      "   first `gatesync apply --dir` into the sandbox",
      { at10k: `${cell(small, "apply")}, ${applied(small)}`, at100k: `${cell(large, "apply")}, ${applied(large)}${grown("apply")}` },
      `${target}; all applied`,
      met("apply") && large.apply.applied === large.resources,
    ),
    row("   the sandbox's own process (not gatesync's): peak RSS over the plan and apply", { at10k: sandboxPeak(small), at100k: sandboxPeak(large) }),
  ];
}

function applyRows(apply: ApplyFigures, sandbox: SandboxThroughput): Row[] {
  const bound = 1000 / 50 / 100;
  const { batched, direct, batchedPostgres } = apply;
  return [
    row(
      "5. apply 1,000 gateway changes, 5 ms latency, 100 requests/s, batches of 50",
      { at10k: `${showS(batched.seconds)}, ${batched.calls} calls` },
      `≤ 1.2 × ${bound} s bound`,
      batched.seconds.median <= 1.2 * bound,
    ),
    ...(batchedPostgres === undefined
      ? []
      : [
          row(
            "   the same, recording into the PostgreSQL state",
            { at10k: `${showS(batchedPostgres.seconds)}, ${batchedPostgres.calls} calls` },
            `≤ 1.2 × ${bound} s bound`,
            batchedPostgres.seconds.median <= 1.2 * bound,
          ),
        ]),
    row(
      "   the same, direct calls",
      { at10k: `${showS(direct.seconds)}, ${direct.calls} calls` },
      "batching ≥ 10× faster",
      direct.seconds.median >= 10 * batched.seconds.median,
    ),
    ...sandbox.results.map((r, i) =>
      row(
        `${i === 0 ? "7. " : "   "}sandbox, ${r.operation}`,
        { at10k: `${n0(r.managementCallsPerSecond)} calls/s (p99 ${r.latencyP99Ms} ms)` },
        "never the bottleneck",
        r.managementCallsPerSecond > 1000,
      ),
    ),
  ];
}

export function buildRows(input: TableInput): Row[] {
  const at = (n: number): SizeResult => input.perSize[n]!;
  return [
    ...inProcessRows(at, input.sharedDocs),
    ...applyRows(input.apply, input.sandbox),
    ...coldRows(input.cold, input.coldStateRecords),
    ...(input.rules === undefined ? [] : rulesRows(input.rules)),
    ...scaleRows(input.scale),
  ];
}

/** The table as Markdown, every figure beside its target, with the run's footer line. */
export function renderTable(rows: readonly Row[], footer: string): string {
  const cells = (r: readonly string[]): string => `| ${r.join(" | ")} |\n`;
  let out = cells(["figure", "1,000 resources", "10,000 resources", "100,000 resources", "target", "met"]);
  out += cells(["---", "---", "---", "---", "---", "---"]);
  for (const r of rows)
    out += cells([r.figure.replace(/^ {3}/, "&nbsp;&nbsp;&nbsp;"), r.at1k, r.at10k, r.at100k, r.target, r.met === undefined ? "" : r.met ? "yes" : "**no**"]);
  return `${out}\n${footer}\n`;
}

/** What bench/results.json keeps of a run that the table's footer names. */
export interface RunFacts {
  readonly date: string;
  readonly durationSeconds: number;
  readonly machine: { readonly quick: boolean; readonly loadAverage: { readonly start: readonly number[]; readonly end: readonly number[] } };
  readonly table: readonly Row[];
}

/** The footer line of a run: how many repetitions, how long, how loaded the machine was. */
export function tableFooter(run: RunFacts, repetitions: number): string {
  const load = run.machine.loadAverage;
  return `(median of ${repetitions} runs unless noted; spread min–max; ${run.durationSeconds} s in all; load average ${load.start.join(" ")} → ${load.end.join(" ")})`;
}
