/**
 * The plan written a change at a time is exactly the plan written at once: JSON byte for byte
 * as `JSON.stringify(…, 2)` gives it, text line for line.
 */
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { isSensitiveMarker } from "../../src/secrets/markers.js";
import type { Plan } from "../../src/plan/plan.js";
import { planChunks, renderPlan } from "../../src/plan/render/render.js";
import { desiredFrom, doc, emptyState, planFor, recordPlan } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { apiDefinition } from "../helpers/resources.js";

afterAll(removeTempRepos);

/**
 * Documents of every printing case: plain; with a gateway extension lacking its id (a member
 * replaced: printed from the document read again); with a `$sensitive` key (printed as a marker,
 * so never from its kept JSON); nested, with an empty object and array.
 */
const extras = [
  "",
  "x-gw-api-gateway: { info: { name: n, state: { active: true } }, upstream: { url: 'http://u.internal' }, server: { listenPath: { value: /x/ } } }\n",
  "x-vendor: { note: { $sensitive: not-a-secret } }\n",
  "x-deep: { a: [1, { b: [], c: {}, d: 'two\\nlines' }], e: null }\n",
];

const api = (i: number, title: string): Record<string, string> => ({
  [`a${i}.yaml`]: apiDefinition({ name: `api-${i}`, apiId: `api-${i}`, spec: `definitionFile: oas/api-${i}.yaml\nquery: { listenPath: /api-${i}/ }` }),
  [`oas/api-${i}.yaml`]: `openapi: 3.0.0\ninfo: { title: '${title}', version: '1' }\n${extras[i % extras.length]!}paths:\n  /items:\n    get:\n      responses: { "200": { description: ok } }\n`,
});

/** `n` resources of several kinds (secrets, documents held by reference), planned twice: creates, updates, no-ops, orphans. */
async function planOf(n: number, seed: number, printsDocuments = false): Promise<Plan> {
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
  const first = await desiredFrom(version(0), { env, printsDocuments });
  const state = recordPlan(planFor(first), first.desired, emptyState);
  return planFor(await desiredFrom(version(1), { env, printsDocuments }), state);
}

const json = (plan: Plan): string =>
  `${JSON.stringify({ $schema: "https://gatesync.dev/schemas/plan.schema.json", ...plan }, (_k, v: unknown) => (isSensitiveMarker(v) ? { sensitive: true } : v), 2)}\n`;

describe("a plan written in pieces", () => {
  it("is the JSON of the whole plan, for plans of any size and content", async () => {
    await fc.assert(
      fc.asyncProperty(fc.integer({ min: 0, max: 40 }), fc.integer({ min: 0, max: 1000 }), fc.boolean(), async (n, seed, printsDocuments) => {
        // printsDocuments: documents' JSON kept from validation, spliced into the plan's JSON
        const plan = await planOf(n, seed, printsDocuments);
        const chunks = [...planChunks(plan, "json")];
        expect(chunks.join("")).toBe(json(plan));
        expect(chunks.length).toBe(plan.changes.length === 0 ? 1 : plan.changes.length + 2);
        JSON.parse(chunks.join(""));
      }),
      { numRuns: 25 },
    );
  });

  it("splices the documents whose JSON validation kept, indented where they stand, and reads the others again", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 2 * extras.length; i++) Object.assign(files, api(i, `API ${i} \u00e9`));
    const plan = planFor(await desiredFrom(files, { printsDocuments: true }));
    const printed = [...planChunks(plan, "json")].join("");
    expect(printed).toBe(json(plan));
    const definitions = (JSON.parse(printed) as { changes: Array<{ fields: Array<{ path: string; after: Record<string, unknown> }> }> }).changes.map(
      (c) => c.fields.find((f) => f.path === "definition")!.after,
    );
    expect(definitions.map((d) => (d.info as { title: string }).title).sort()).toEqual(
      Object.keys(files)
        .filter((f) => f.startsWith("a"))
        .map((f) => `API ${f.slice(1, -5)} \u00e9`)
        .sort(),
    );
    // a document whose JSON holds a `$sensitive` key prints it as a marker, as before
    expect(definitions.filter((d) => d["x-vendor"] !== undefined).map((d) => d["x-vendor"])).toEqual([
      { note: { sensitive: true } },
      { note: { sensitive: true } },
    ]);
    // the gateway extension completed with the API's id (a member replaced) prints completed
    const completed = definitions.filter((d) => d["x-gw-api-gateway"] !== undefined).map((d) => (d["x-gw-api-gateway"] as { info: { id?: string } }).info.id);
    expect(completed.sort()).toEqual(["api-1", "api-5"]);
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
