import { readFile } from "node:fs/promises";
import { describe, expect, it } from "vitest";
import {
  benchTable,
  performanceDocPath,
  resultsPath,
  startupBenchTable,
  startupMarkers,
  startupResultsPath,
  withBenchTable,
} from "../../bench/publish-table.js";
import type { StartupRun } from "../../bench/publish-table.js";
import type { RunFacts } from "../../bench/table.js";

describe("docs/dev/performance.md's benchmark table", () => {
  it("is the table of bench/results.json, as `npm run bench:table` writes it", async () => {
    const run = JSON.parse(await readFile(resultsPath, "utf8")) as RunFacts;
    const doc = await readFile(performanceDocPath, "utf8");
    const fresh = withBenchTable(doc, benchTable(run));
    expect(doc === fresh, "the table in docs/dev/performance.md differs from bench/results.json: run `npm run bench:table` and commit the result").toBe(true);
  });

  it("shows the start-up table of bench/results.startup.json, as `npm run bench:table` writes it", async () => {
    const run = JSON.parse(await readFile(startupResultsPath, "utf8")) as StartupRun;
    const doc = await readFile(performanceDocPath, "utf8");
    const fresh = withBenchTable(doc, startupBenchTable(run), startupMarkers);
    expect(doc === fresh, "the start-up table in docs/dev/performance.md differs from bench/results.startup.json: run `npm run bench:table`").toBe(true);
  });

  it("replaces only what is between its markers", () => {
    const doc =
      "intro\n<!-- bench-table:start (generated from bench/results.json by `npm run bench:table`; do not edit) -->\nold\n<!-- bench-table:end -->\nrest\n";
    expect(withBenchTable(doc, "new\n")).toBe(doc.replace("old\n", "new\n"));
    expect(() => withBenchTable("no markers", "x")).toThrow(/markers/);
  });
});
