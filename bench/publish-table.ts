/**
 * Writes the benchmark's table into docs/dev/performance.md from bench/results.json, between
 * the markers below: the table a reader sees is always the last complete run's, never a copy
 * edited by hand (`test/docs/bench-table.test.ts` fails when the two differ).
 * `npm run bench` calls it after a run; `npm run bench:table` runs it alone.
 */
import { readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { renderTable, tableFooter } from "./table.js";
import type { RunFacts } from "./table.js";

const here = path.dirname(fileURLToPath(import.meta.url));
export const resultsPath = path.join(here, "results.json");
export const performanceDocPath = path.resolve(here, "../docs/dev/performance.md");

const start = "<!-- bench-table:start (generated from bench/results.json by `npm run bench:table`; do not edit) -->";
const end = "<!-- bench-table:end -->";

/** The table of a run as the docs show it: the run's date, then the table and its footer. */
export function benchTable(run: RunFacts): string {
  const repetitions = run.machine.quick ? 3 : 5;
  return `Run of ${run.date}:\n\n${renderTable(run.table, tableFooter(run, repetitions))}`;
}

/** The document with the text between the markers replaced by `table`. */
export function withBenchTable(doc: string, table: string): string {
  const from = doc.indexOf(start);
  const to = doc.indexOf(end);
  if (from < 0 || to < from) throw new Error(`${performanceDocPath} has no bench-table markers`);
  return `${doc.slice(0, from + start.length)}\n${table}${doc.slice(to)}`;
}

export async function publishTable(): Promise<void> {
  const run = JSON.parse(await readFile(resultsPath, "utf8")) as RunFacts;
  const doc = await readFile(performanceDocPath, "utf8");
  await writeFile(performanceDocPath, withBenchTable(doc, benchTable(run)));
}

if (process.argv[1] !== undefined && path.resolve(process.argv[1]) === fileURLToPath(import.meta.url)) await publishTable();
