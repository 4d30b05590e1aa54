/**
 * Classification runs only on updates whose fields changed: a plan of many unchanged APIs
 * never calls the OpenAPI diff, and one changed API calls it once.
 */
import { createRequire } from "node:module";
import { afterAll, describe, expect, it, vi } from "vitest";
import fc from "fast-check";
import type * as SmartDiff from "api-smart-diff";
import { classifyUpdate } from "../../src/plan/breaking/classify.js";
import { corpusDocs } from "../helpers/oas-mutations.js";
import { desiredFrom, emptyState, planFor, recordPlan } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { apiDefinition } from "../helpers/resources.js";

// The classifier loads the library at its first comparison, through require (kinds/breaking/openapi.ts):
// the calls are counted on that module, which this require shares.
const smartDiff = createRequire(import.meta.url)("api-smart-diff") as typeof SmartDiff;
const compare = vi.spyOn(smartDiff, "apiCompare");

afterAll(() => {
  compare.mockRestore();
  return removeTempRepos();
});

describe("the cost of classifying", () => {
  it("compares only the API whose document changed", async () => {
    const docs = corpusDocs("3.0").map((d) => d.doc);
    const files = (list: unknown[]): Record<string, string> =>
      Object.fromEntries(
        list.map((d, i) => [`api-${i}.yaml`, apiDefinition({ name: `api-${i}`, apiId: `id-${i}`, spec: `definition: ${JSON.stringify(d)}` })]),
      );
    const before = await desiredFrom(files(docs));
    const state = recordPlan(planFor(before), before.desired, emptyState);
    compare.mockClear();
    const unchanged = planFor(await desiredFrom(files(docs)), state);
    expect(unchanged.changes.every((c) => c.action === "no-op" && c.compatibility === undefined)).toBe(true);
    expect(compare).toHaveBeenCalledTimes(0);
    const edited = docs.map((d, i) => (i === 0 ? { ...(d as Record<string, unknown>), info: { title: "Edited", version: "2" } } : d));
    const plan = planFor(await desiredFrom(files(edited)), state);
    expect(plan.changes.filter((c) => c.action === "update").map((c) => c.id)).toEqual(["ApiDefinition/api-0"]);
    expect(compare).toHaveBeenCalledTimes(1);
  });

  it("finds nothing between a document and itself, and every finding has a path and a reason", () => {
    const docs = [...corpusDocs("3.0"), ...corpusDocs("3.1")].map((d) => d.doc);
    fc.assert(
      fc.property(fc.constantFrom(...docs), fc.constantFrom(...docs), (a, b) => {
        expect(classifyUpdate("ApiDefinition", { query: {}, definition: a }, { query: {}, definition: structuredClone(a) })?.changes).toEqual([]);
        for (const c of classifyUpdate("ApiDefinition", { query: {}, definition: a }, { query: {}, definition: b })?.changes ?? []) {
          expect(c.path).toMatch(/^(definition|query)\b/);
          expect(c.reason.trim()).not.toBe("");
        }
      }),
      { numRuns: 60 },
    );
  });
});
