/**
 * The plan written a change at a time is exactly the plan written at once: JSON byte for byte
 * as `JSON.stringify(…, 2)` gives it, text line for line.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { isSensitiveMarker } from "../../src/secrets/markers.js";
import type { Plan } from "../../src/plan/plan.js";
import { planChunks, renderPlan } from "../../src/plan/render.js";
import { desiredFrom, doc, emptyState, planFor, recordPlan } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const api = (i: number, title: string): Record<string, string> => ({
  [`a${i}.yaml`]: doc("ApiDefinition", `api-${i}`, `apiId: api-${i}\ndefinitionFile: oas/api-${i}.yaml\nquery: { listenPath: /api-${i}/ }`),
  [`oas/api-${i}.yaml`]: `openapi: 3.0.0\ninfo: { title: '${title}', version: '1' }\npaths:\n  /items:\n    get:\n      responses: { "200": { description: ok } }\n`,
});

/** `n` resources of several kinds (secrets, documents held by reference), planned twice: creates, updates, no-ops, orphans. */
async function planOf(n: number, seed: number): Promise<Plan> {
  const version = (round: number): Record<string, string> => {
    const files: Record<string, string> = {};
    for (let i = 0; i < n; i++) {
      if (round === 1 && (i + seed) % 5 === 0) continue; // removed: an orphan
      const v = round === 1 && (i + seed) % 3 === 0 ? "changed" : "first";
      const pick = (i + seed) % 4;
      if (pick === 0)
        files[`k${i}.yaml`] = doc(
          "OrgKey",
          `key-${i}`,
          `keyId: org-${i}\nrate: ${v === "first" ? 10 : 20}\nhmac_enabled: true\nhmac_string: \${env:BENCH_SECRET}`,
        );
      else if (pick === 1) files[`w${i}.yaml`] = doc("PortalWebhook", `hook-${i}`, `Name: ${v}\nURL: https://h/${i}\nMethod: POST\nEvents: [UserRegistered]`);
      else if (pick === 2) Object.assign(files, api(i, `${v} \u00e9 "quoted"`));
      else files[`d${i}.yaml`] = doc("DashboardWebhook", `dash-${i}`, `method: GET\ntarget_path: https://h/${v}/${i}`);
    }
    return files;
  };
  const env = { BENCH_SECRET: "bench-secret-value-0123456789" };
  const first = await desiredFrom(version(0), { env });
  const state = recordPlan(planFor(first), first.desired, emptyState);
  return planFor(await desiredFrom(version(1), { env }), state);
}

const json = (plan: Plan): string =>
  `${JSON.stringify({ $schema: "https://gatesync.dev/schemas/plan.schema.json", ...plan }, (_k, v: unknown) => (isSensitiveMarker(v) ? { sensitive: true } : v), 2)}\n`;

describe("a plan written in pieces", () => {
  it("is the JSON of the whole plan, for plans of any size and content", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 1000 }), async (n, seed) => {
        const plan = await planOf(n, seed);
        const chunks = [...planChunks(plan, "json")];
        expect(chunks.join("")).toBe(json(plan));
        expect(chunks.length).toBe(plan.changes.length === 0 ? 1 : plan.changes.length + 2);
        JSON.parse(chunks.join(""));
      }),
      { numRuns: 25 },
    );
  });

  it("is the text of the whole plan, a change per piece", async () => {
    for (const n of [0, 1, 7, 30]) {
      const plan = await planOf(n, n);
      const chunks = [...planChunks(plan, "text")];
      expect(chunks.join("")).toBe(renderPlan(plan, "text"));
      expect(chunks.length).toBe(plan.changes.filter((c) => c.action !== "no-op").length + 2);
    }
    // the generated plans hold what the pieces must carry: every action, markers, documents by reference
    const plan = await planOf(30, 1);
    expect([...new Set(plan.changes.map((c) => c.action))]).toEqual(expect.arrayContaining(["update", "no-op", "orphan", "blocked"]));
    const text = [...planChunks(plan, "json")].join("");
    expect(text).toContain('"after": "changed é \\"quoted\\""');
  });
});
