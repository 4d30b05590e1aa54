/**
 * The rule runner's short paths (src/rules/local-resolver.ts, located-document.ts,
 * spectral-speed.ts) change no finding: the same repository validated as Spectral lints as it
 * ships (GATESYNC_SPECTRAL_AS_IS) reports the same diagnostics — rule, message, path,
 * file:line:column, severity, in the same order — on the OpenAPI corpus with every rule of
 * `spectral:oas` plus rules on unresolved documents and the reference graph, and on resources
 * with and without `$ref`. Then the two pieces the short paths rest on, over generated input:
 * `hasRef` against a plain recursive search, and the order findings are put back into against
 * Spectral's own sort.
 */
import { readdirSync } from "node:fs";
import { copyFile, mkdir, writeFile } from "node:fs/promises";
import { createRequire } from "node:module";
import path from "node:path";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { hasRef } from "../../src/rules/local-resolver.js";
import { locatedDocument } from "../../src/rules/located-document.js";
import { spawnCli } from "../helpers/cli.js";
import { removeTempRepos, sharedRoot, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const corpus = path.join(sharedRoot, "corpus/oas");

const openapiRuleset = `extends: [[spectral:oas, all]]
rules:
  unresolved-descriptions:
    given: "$..description"
    resolved: false
    severity: info
    then: { function: length, functionOptions: { min: 30 } }
  unused-schemas:
    given: "$.components.schemas"
    severity: hint
    then: { function: unreferencedReusableObject, functionOptions: { reusableObjectsLocation: "#/components/schemas" } }
  two-findings-one-path:
    given: "$.info"
    then:
      - { field: termsOfService, function: truthy }
      - { field: termsOfService, function: pattern, functionOptions: { match: "^https://" } }
`;

const resourcesRuleset = `rules:
  team-label:
    given: "$.metadata"
    severity: warn
    then: { field: labels.team, function: truthy }
  name-kebab-case:
    given: "$.metadata.name"
    then: { function: casing, functionOptions: { type: kebab } }
  listen-path:
    given: "$.spec.query.listenPath"
    severity: info
    then: { function: pattern, functionOptions: { match: "^/team-" } }
`;

interface Report {
  readonly diagnostics: ReadonlyArray<{ readonly code: string; readonly line?: number }>;
}

/** The corpus' documents (3.0 and 3.1 that pass), each the definitionFile of an API; some resources with a `$ref` in their spec. */
async function corpusRepository(): Promise<string> {
  const dir = await tempRepo({
    "gatesync.yaml":
      "apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\ntargets: {}\nrules: { openapi: rules/openapi.yaml, resources: rules/resources.yaml }\n",
    "rules/openapi.yaml": openapiRuleset,
    "rules/resources.yaml": resourcesRuleset,
  });
  await mkdir(path.join(dir, "config/openapi"), { recursive: true });
  let i = 0;
  for (const version of ["3.0/pass", "3.1/pass"]) {
    for (const f of readdirSync(path.join(corpus, version)).sort()) {
      const name = i % 3 === 0 ? `Api_${i}` : `api-${i}`;
      const target = `openapi/api-${i}${path.extname(f)}`;
      await copyFile(path.join(corpus, version, f), path.join(dir, "config", target));
      const labels = i % 2 === 0 ? "\n  labels: { team: core }" : "";
      const extra = i % 4 === 1 ? '\n  x-note: { $ref: "#/metadata" }' : "";
      await writeFile(
        path.join(dir, "config", `api-${i}.yaml`),
        `apiVersion: gatesync.dev/v1\nkind: ApiDefinition\nmetadata:\n  name: ${name}${labels}\nspec:\n  apiId: api-${i}\n  definitionFile: ${target}\n  query: { listenPath: /api-${i}/ }${extra}\n`,
      );
      i++;
    }
  }
  return dir;
}

describe("the rule runner's short paths", () => {
  it("report what Spectral as it ships reports, on the corpus and on resources with and without $ref", async () => {
    const dir = await corpusRepository();
    const cfg = path.join(dir, "gatesync.yaml");
    const args = ["validate", "--config", cfg, "--format", "json"];
    const [fast, asIs] = await Promise.all([
      spawnCli(args, { env: { GATESYNC_RULES_CACHE: "off" } }),
      spawnCli(args, { env: { GATESYNC_SPECTRAL_AS_IS: "1", GATESYNC_RULES_CACHE: "off" } }),
    ]);
    expect(fast.stderr).toBe("");
    const found = (JSON.parse(fast.stdout) as Report).diagnostics.filter((d) => d.code === "RULESET_VIOLATION");
    // the rules ran, and their findings are located
    expect(found.length).toBeGreaterThan(100);
    expect(found.every((d) => typeof d.line === "number")).toBe(true);
    expect(JSON.parse(asIs.stdout)).toEqual(JSON.parse(fast.stdout));
  }, 180_000);
});

/** Whether `$ref` is a key anywhere inside, the obvious way. */
function refInside(value: unknown): boolean {
  if (Array.isArray(value)) return value.some(refInside);
  if (value === null || typeof value !== "object") return false;
  return Object.prototype.hasOwnProperty.call(value, "$ref") || Object.values(value).some(refInside);
}

describe("hasRef", () => {
  it("finds a $ref key at any depth, and only a key", () => {
    const key = fc.constantFrom("$ref", "ref", "a", "$refs", "0");
    const value = fc.letrec((tie) => ({
      node: fc.oneof({ depthSize: "small" }, fc.constantFrom(null, 1, "$ref", true), fc.array(tie("node")), fc.dictionary(key, tie("node"))),
    })).node;
    fc.assert(fc.property(value, (v) => hasRef(v) === refInside(v)));
  });
});

interface SpectralResult {
  readonly code: string;
  readonly path: ReadonlyArray<string | number>;
  readonly message: string;
  readonly source: string;
  readonly range: { readonly start: { line: number; character: number }; readonly end: { line: number; character: number } };
}

const require = createRequire(import.meta.url);
// Spectral's own sort of a document's findings (what Spectral.run returns them in)
const { sortResults } = require(path.join(path.dirname(require.resolve("@stoplight/spectral-core")), "runner/utils/results.js")) as {
  sortResults: (results: readonly SpectralResult[]) => SpectralResult[];
};

describe("findings put back into Spectral's order", () => {
  it("is the order Spectral gives without positions, whatever the positions", () => {
    const segment = fc.oneof(fc.constantFrom("a", "b", "a,b", "10", "9"), fc.nat(12));
    const finding = fc.record({
      code: fc.constantFrom("rule-2", "rule-10", "Rule-2", "a", "b", "rule-02"),
      path: fc.array(segment, { maxLength: 3 }),
      message: fc.constantFrom("x", "y"),
    });
    const place = fc.record({ line: fc.integer({ min: 1, max: 5 }), column: fc.integer({ min: 1, max: 3 }) });
    fc.assert(
      fc.property(fc.array(finding, { maxLength: 25 }), fc.func(place), (found, where) => {
        const document = locatedDocument({}, "/r/a.yaml", (p) => where(JSON.stringify(p)));
        const origin = { line: 0, character: 0 };
        // as Spectral records them: each finding's range asked for in the order found
        const ranged = found.map((f) => ({
          ...f,
          source: "/r/a.yaml",
          range: document.input.getLocationForJsonPath(undefined, f.path)?.range ?? { start: origin, end: origin },
        }));
        const unplaced = found.map((f) => ({ ...f, source: "/r/a.yaml", range: { start: origin, end: origin } }));
        const expected = sortResults(unplaced).map((r) => [r.code, r.path, r.message]);
        expect(document.inSpectralOrder(sortResults(ranged)).map((r) => [r.code, r.path, r.message])).toEqual(expected);
      }),
      // ties of rule and joined path with different paths ("rule-2"/"rule-02", ["a,b"]/["a", "b"]) are rare draws
      { numRuns: 2_000 },
    );
  });
});
