/**
 * `extends: [[spectral:oas, recommended]]` on the OpenAPI corpus (the OpenAPI Initiative's
 * examples and the 3.1 test suite's passing documents): each document is the definitionFile of
 * an ApiDefinition, validated as a repository. Spectral's built-in ruleset runs offline and its
 * findings are located in the documents; and the per-thread reuse of Spectral's compiled
 * queries and schemas (spectral-speed.ts) changes no finding: a process linting as Spectral
 * does (GATESYNC_SPECTRAL_AS_IS) reports the same.
 */
import { readFileSync, readdirSync } from "node:fs";
import { mkdir, writeFile, copyFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parse } from "yaml";
import { spawnCli } from "../helpers/cli.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const corpus = path.join(projectRoot, "test/fixtures/shared/corpus/oas");

/** The corpus documents that are APIs (they have paths) and that gatesync itself accepts. */
function corpusDocuments(): Array<{ file: string; value: Record<string, unknown> }> {
  const docs: Array<{ file: string; value: Record<string, unknown> }> = [];
  for (const dir of ["3.0/pass", "3.1/pass"]) {
    for (const f of readdirSync(path.join(corpus, dir)).sort()) {
      const value = parse(readFileSync(path.join(corpus, dir, f), "utf8")) as Record<string, unknown> | null;
      if (value !== null && typeof value === "object" && value.paths !== undefined && Object.keys(value.paths as object).length > 0)
        docs.push({ file: path.join(dir, f), value });
    }
  }
  return docs;
}

interface Report {
  diagnostics: Array<{ severity: string; code: string; rule?: string; file?: string; line?: number; resource?: string; message: string; path?: string }>;
}

describe("spectral:oas on the OpenAPI corpus", () => {
  it("runs recommended offline on every document, each finding located in its document; the speed-ups change nothing", async () => {
    const docs = corpusDocuments();
    expect(docs.length).toBeGreaterThan(5);
    const dir = await tempRepo({
      "gatesync.yaml":
        "apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\ntargets: {}\nrules: { openapi: rules/openapi.yaml }\n",
      "rules/openapi.yaml": "extends: [[spectral:oas, recommended]]\n",
    });
    await mkdir(path.join(dir, "config/openapi"), { recursive: true });
    for (const [i, d] of docs.entries()) {
      const name = `api-${i}`;
      const target = `openapi/${name}${path.extname(d.file)}`;
      await copyFile(path.join(corpus, d.file), path.join(dir, "config", target));
      await writeFile(
        path.join(dir, "config", `${name}.yaml`),
        `apiVersion: gatesync.dev/v1\nkind: ApiDefinition\nmetadata: { name: ${name} }\nspec:\n  apiId: ${name}\n  definitionFile: ${target}\n`,
      );
    }
    const cfg = path.join(dir, "gatesync.yaml");
    const [fast, asIs] = await Promise.all([
      // both lint (no findings cache): the comparison is of the two ways of linting
      spawnCli(["validate", "--config", cfg, "--format", "json"], { env: { GATESYNC_RULES_CACHE: "off" } }),
      spawnCli(["validate", "--config", cfg, "--format", "json"], { env: { GATESYNC_SPECTRAL_AS_IS: "1", GATESYNC_RULES_CACHE: "off" } }),
    ]);
    expect(fast.stderr).toBe("");
    const report = JSON.parse(fast.stdout) as Report;
    const ruled = report.diagnostics.filter((d) => d.code === "RULESET_VIOLATION");
    // every document without info.contact gets spectral:oas's info-contact, in its own file
    for (const [i, d] of docs.entries()) {
      const info = d.value.info as Record<string, unknown> | undefined;
      // rules run on documents the gateway accepts: one its semantic checks refuse is reported as that
      const refused = report.diagnostics.some((x) => x.code === "OPENAPI_INVALID" && x.resource === `ApiDefinition/api-${i}`);
      if (info?.contact !== undefined || refused) continue;
      expect(ruled, d.file).toContainEqual(
        expect.objectContaining({ rule: "info-contact", file: `openapi/api-${i}${path.extname(d.file)}`, resource: `ApiDefinition/api-${i}`, path: "info" }),
      );
    }
    // located: a line in the document for each finding, and several rules at work
    expect(ruled.every((d) => d.file?.startsWith("openapi/") === true && typeof d.line === "number")).toBe(true);
    expect(new Set(ruled.map((d) => d.rule)).size).toBeGreaterThan(5);
    expect((JSON.parse(asIs.stdout) as Report).diagnostics).toEqual(report.diagnostics);
  }, 120_000);
});
