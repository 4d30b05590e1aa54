/**
 * `BENCH_PARTS=shapes`: cold `gatesync validate` and a first `gatesync plan --dir` (empty state,
 * as JSON and in the default text format)
 * of 10,000-resource repositories of several shapes — each API its own YAML document (the
 * realistic case of the other rows), its own JSON document, one and a hundred resources per
 * file, half the APIs sharing five documents — each beside its own floor: a process that parses
 * the same files with `yaml` on one thread (bench/yaml-floor.mjs), interleaved. Whole processes
 * as users run them, the manifest's NODE_OPTIONS. Writes bench/results.shapes.json; the table in
 * docs/dev/performance.md is generated from it (bench/shapes-table.ts).
 */
import { mkdir, mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { cli, measureProcess, processFigures, writeBenchConfig } from "./cold.js";
import type { ProcessSample } from "./cold.js";
import { env, loadNow, log, quick, resultsHead } from "./common.js";
import { generateRepository } from "./generate.js";
import type { Shape } from "./generate.js";
import { manifestMemory } from "./memory-limit.js";
import { publishTable } from "./publish-table.js";
import { shapesResultsPath } from "./shapes-table.js";
import type { ShapeFigures } from "./shapes-table.js";

const here = path.dirname(fileURLToPath(import.meta.url));
const oas = path.resolve(here, "../test/fixtures/shared/corpus/oas");
const offline = "http://127.0.0.1:9/";

export const shapes: ReadonlyArray<{ readonly label: string; readonly shape: Shape }> = [
  { label: "each API its own YAML document, 10 resources per file", shape: { mode: "own" } },
  { label: "each API its own JSON document", shape: { mode: "own", openapi: "json" } },
  { label: "1 resource per file", shape: { mode: "own", perFile: 1 } },
  { label: "100 resources per file", shape: { mode: "own", perFile: 100 } },
  { label: "half the APIs share 5 documents", shape: { mode: "mixed" } },
];

async function shapeFigures(dir: string, label: string, shape: Shape, n: number): Promise<ShapeFigures> {
  log(`[shapes] ${label}: generating`);
  const g = await generateRepository(dir, 10_000, oas, shape);
  await mkdir(path.join(dir, "empty"));
  const config = await writeBenchConfig(path.join(dir, "empty"), { gateway: offline, portal: offline, dashboard: offline, llm: offline });
  const manifest = manifestMemory();
  const podEnv = { ...env, ...(manifest.nodeOptions === undefined ? {} : { NODE_OPTIONS: manifest.nodeOptions }) };
  const floor: ProcessSample[] = [];
  const validate: ProcessSample[] = [];
  const plan: ProcessSample[] = [];
  const planText: ProcessSample[] = [];
  for (let i = 0; i < n; i++) {
    floor.push(await measureProcess([path.join(here, "yaml-floor.mjs"), g.root], env));
    validate.push(await measureProcess([cli, "validate", g.root], podEnv));
    plan.push(await measureProcess([cli, "plan", "-c", config, "--dir", g.root, "--format", "json"], podEnv));
    planText.push(await measureProcess([cli, "plan", "-c", config, "--dir", g.root], podEnv));
  }
  return {
    label,
    files: g.files.length,
    floor: processFigures(floor),
    validate: processFigures(validate),
    firstPlan: processFigures(plan),
    firstPlanText: processFigures(planText),
  };
}

/** `BENCH_PARTS=shapes`. */
export async function shapesOnly(): Promise<void> {
  const started = Date.now();
  const start = loadNow();
  const n = Number(process.env.BENCH_SHAPES_REPS ?? (quick ? 2 : 3));
  const figures: ShapeFigures[] = [];
  for (const [k, { label, shape }] of shapes.entries()) {
    const dir = await mkdtemp(path.join(tmpdir(), `gatesync-bench-shape-${k}-`));
    try {
      figures.push(await shapeFigures(dir, label, shape, n));
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
  const results = {
    ...resultsHead("shapes", start, started),
    runs: n,
    shapes: figures,
  };
  await writeFile(shapesResultsPath, `${JSON.stringify(results, null, 2)}\n`);
  await publishTable();
}
