/**
 * plan/ is the pure planner: it imports none of the folders that read files, repositories,
 * rulesets or send spans (validate, source, rules, load, telemetry). What does lives in run/,
 * which calls the planner between its IO stages (docs/dev/architecture.md, "The run").
 */
import { describe, expect, it } from "vitest";
import { fileImports } from "./import-graph.js";

const io = ["validate/", "source/", "rules/", "load/", "telemetry/"];

/** plan/'s imports of an IO folder, each as `file:line imports file` (types included: a type names what it came from). */
function ioImportsOfPlan(): string[] {
  return fileImports()
    .filter((i) => i.from.startsWith("plan/") && io.some((folder) => i.to.startsWith(folder)))
    .map((i) => `src/${i.from}:${i.line} imports src/${i.to}`);
}

describe("plan/", () => {
  it("imports none of validate/, source/, rules/, load/, telemetry/", () => {
    expect(ioImportsOfPlan()).toEqual([]);
  });

  it("is read by the check: plan/ imports other folders, and run/ imports the IO ones", () => {
    const imports = fileImports();
    expect(imports.some((i) => i.from.startsWith("plan/") && i.to.startsWith("record/"))).toBe(true);
    expect(imports.some((i) => i.from.startsWith("run/") && io.some((folder) => i.to.startsWith(folder)))).toBe(true);
  });
});
