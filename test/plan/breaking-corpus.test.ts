/**
 * OpenAPI changes made from real documents (the shared corpus, 3.0 and 3.1), planned as
 * ApiDefinition updates and classified — each shown in the text, markdown and JSON plans.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { PlannedChange } from "../../src/plan/plan-change.js";
import { renderPlan } from "../../src/plan/render/render.js";
import { SchemaRegistry } from "../../src/validate/schema/schema-registry.js";
import { tableCells } from "../helpers/markdown.js";
import { corpusDocs, mutations } from "../helpers/oas-mutations.js";
import type { Mutation } from "../helpers/oas-mutations.js";
import { desiredFrom, emptyState, planFor, recordPlan } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { apiDefinition } from "../helpers/resources.js";

afterAll(removeTempRepos);
const schemas = new SchemaRegistry();

interface Expectation {
  readonly verdict: string;
  /** What every breaking reason of a breaking change says. */
  readonly reason?: RegExp;
}

const expected: Array<[Mutation, Expectation]> = [
  [mutations.removeOperation, { verdict: "breaking", reason: /^\[Removed\] operation [A-Z]+ \// }],
  [mutations.addRequiredParameter, { verdict: "breaking", reason: /required query parameter `gatesync_tenant`/ }],
  [mutations.changeType, { verdict: "breaking", reason: /^type of .* changed from (string to integer|integer to string): / }],
  [mutations.addOptionalField, { verdict: "non-breaking" }],
  [mutations.editDescription, { verdict: "annotation" }],
];

/** Plans the mutated documents of one corpus version against the state of the originals. */
async function planMutation(
  version: "3.0" | "3.1",
  mutation: Mutation,
): Promise<{ changes: PlannedChange[]; files: string[]; plan: ReturnType<typeof planFor> }> {
  const pairs = corpusDocs(version).flatMap(({ file, doc: d }) => {
    const after = mutation.apply(d);
    return after === undefined ? [] : [{ file, before: d, after }];
  });
  const before = await desiredFrom(
    Object.fromEntries(
      pairs.map((p, i) => [`api-${i}.yaml`, apiDefinition({ name: `api-${i}`, apiId: `id-${i}`, spec: `definition: ${JSON.stringify(p.before)}` })]),
    ),
  );
  const state = recordPlan(planFor(before), before.desired, emptyState);
  const after = await desiredFrom(
    Object.fromEntries(
      pairs.map((p, i) => [`api-${i}.yaml`, apiDefinition({ name: `api-${i}`, apiId: `id-${i}`, spec: `definition: ${JSON.stringify(p.after)}` })]),
    ),
  );
  const plan = planFor(after, state);
  return { plan, files: pairs.map((p) => p.file), changes: pairs.map((_p, i) => plan.changes.find((c) => c.id === `ApiDefinition/api-${i}`)!) };
}

describe.each(["3.0", "3.1"] as const)("OpenAPI %s corpus pairs", (version) => {
  it.each(expected.map(([m, e]) => [m.name, m, e] as const))("%s is classified as expected, in all three formats", async (_name, mutation, want) => {
    const { plan, files, changes } = await planMutation(version, mutation);
    expect(files.length).toBeGreaterThanOrEqual(3);
    const text = renderPlan(plan, "text");
    const json = JSON.parse(renderPlan(plan, "json")) as {
      changes: Array<{ id: string; breaking?: Array<{ path: string; reason: string }>; compatibility?: { verdict: string } }>;
    };
    expect(schemas.validate("plan.schema.json", json)).toEqual([]);
    const rows = tableCells(renderPlan(plan, "markdown"));
    changes.forEach((c, i) => {
      const label = `${files[i] ?? ""}: ${JSON.stringify(c.compatibility)}`;
      expect(c.action, label).toBe("update");
      expect(c.compatibility?.verdict, label).toBe(want.verdict);
      const broken = c.breaking ?? [];
      const row = rows.find((r) => r[1] === c.id);
      const head = text.split("\n").find((l) => l.includes(`~ ${c.id}  update`)) ?? "";
      const jsonChange = json.changes.find((j) => j.id === c.id);
      expect(jsonChange?.breaking, label).toEqual(broken);
      if (want.reason !== undefined) {
        expect(broken.length, label).toBeGreaterThan(0);
        for (const b of broken) {
          expect(b.reason, label).toMatch(want.reason);
          expect(b.path).toMatch(/^definition\.paths\[/);
          expect(text).toContain(`⚠ breaking: ${b.path}: ${b.reason}`);
        }
        expect(head).toContain("⚠ breaking");
        expect(row?.[2]).toBe("update ⚠ breaking");
      } else {
        expect(broken, label).toEqual([]);
        expect(head).not.toContain("⚠ breaking");
        expect(row?.[2]).toBe("update");
        expect(text).toContain(want.verdict === "annotation" ? "compatible: 1 annotation only" : "compatible: ");
      }
    });
  });
});
