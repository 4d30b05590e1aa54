/**
 * Writes the benchmark's table into docs/dev/performance.md from bench/results.json, between
 * the markers below: the table a reader sees is always the last complete run's, never a copy
 * edited by hand (`test/docs/bench-table.test.ts` fails when the two differ).
 * `npm run bench` calls it after a run; `npm run bench:table` runs it alone.
 */
import { existsSync } from "node:fs";
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { renderTable, tableFooter } from "./table.js";
import type { RunFacts } from "./table.js";
import { startupTable } from "./startup-table.js";
import type { StartupFigures } from "./startup.js";
import { shapesBenchTable, shapesMarkers, shapesResultsPath } from "./shapes-table.js";
import type { ShapesRun } from "./shapes-table.js";
import { webhookBenchTable, webhookMarkers, webhookResultsPath } from "./webhook-table.js";
import type { WebhookRun } from "./webhook-table.js";

const here = path.dirname(fileURLToPath(import.meta.url));
export const resultsPath = path.join(here, "results.json");
export const performanceDocPath = path.resolve(here, "../docs/dev/performance.md");
/** The start-up part's own run (`BENCH_PARTS=startup`), with its own table. */
export const startupResultsPath = path.join(here, "results.startup.json");

const start = "<!-- bench-table:start (generated from bench/results.json by `npm run bench:table`; do not edit) -->";
const end = "<!-- bench-table:end -->";

/** The table of a run as the docs show it: the run's date, then the table and its footer. */
export function benchTable(run: RunFacts): string {
  const repetitions = run.machine.quick ? 3 : 5;
  return `Run of ${run.date}:\n\n${renderTable(run.table, tableFooter(run, repetitions))}`;
}

/** The document with the text between the markers replaced by `table`. */
export function withBenchTable(doc: string, table: string, markers: { readonly start: string; readonly end: string } = { start, end }): string {
  const from = doc.indexOf(markers.start);
  const to = doc.indexOf(markers.end);
  if (from < 0 || to < from) throw new Error(`${performanceDocPath} has no bench-table markers`);
  return `${doc.slice(0, from + markers.start.length)}\n${table}${doc.slice(to)}`;
}

/** What bench/results.startup.json holds. */
export interface StartupRun {
  readonly date: string;
  readonly durationSeconds: number;
  readonly machine: { readonly quick: boolean; readonly loadAverage: { readonly start: readonly number[]; readonly end: readonly number[] } };
  readonly startup: StartupFigures;
}

export const startupMarkers = {
  start: "<!-- startup-table:start (generated from bench/results.startup.json by `npm run bench:table`; do not edit) -->",
  end: "<!-- startup-table:end -->",
};

export function startupFooter(run: StartupRun): string {
  const load = run.machine.loadAverage;
  return `(median of ${run.startup.node.wallMs.runs} runs, interleaved; spread min–max; ${run.durationSeconds} s in all; load average ${load.start.join(" ")} → ${load.end.join(" ")})`;
}

/** The start-up table as the docs show it: the run's date, then the table and its footer. */
export function startupBenchTable(run: StartupRun): string {
  return `Run of ${run.date}:\n\n${startupTable(run.startup, startupFooter(run))}`;
}

export async function publishTable(): Promise<void> {
  const run = JSON.parse(await readFile(resultsPath, "utf8")) as RunFacts;
  let doc = withBenchTable(await readFile(performanceDocPath, "utf8"), benchTable(run));
  if (existsSync(startupResultsPath))
    doc = withBenchTable(doc, startupBenchTable(JSON.parse(await readFile(startupResultsPath, "utf8")) as StartupRun), startupMarkers);
  if (existsSync(webhookResultsPath))
    doc = withBenchTable(doc, webhookBenchTable(JSON.parse(await readFile(webhookResultsPath, "utf8")) as WebhookRun), webhookMarkers);
  if (existsSync(shapesResultsPath))
    doc = withBenchTable(doc, shapesBenchTable(JSON.parse(await readFile(shapesResultsPath, "utf8")) as ShapesRun), shapesMarkers);
  await writeFile(performanceDocPath, doc);
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await publishTable();
