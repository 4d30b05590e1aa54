/**
 * Real OpenAPI documents nobody here wrote: every `pass` document must load as an
 * ApiDefinition body, and the offline check must reject the `fail` documents.
 */
import { copyFile, mkdir, readdir } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import { removeTempRepos, sharedRoot, tempRepo } from "../helpers/temp-repo.js";

const validator = new RepositoryValidator();
afterAll(removeTempRepos);

const corpus = path.join(sharedRoot, "corpus/oas");

async function asApiDefinitions(dir: string): Promise<{ root: string; names: string[] }> {
  const files = (await readdir(path.join(corpus, dir))).filter((f) => f.endsWith(".yaml")).sort();
  const resources: Record<string, string> = {};
  const names: string[] = [];
  files.forEach((file, i) => {
    const name = `api-${i}`;
    names.push(file);
    resources[`apis/${name}.yaml`] =
      `apiVersion: gatesync.dev/v1\nkind: ApiDefinition\nmetadata:\n  name: ${name}\n  annotations: { source: ${file} }\nspec:\n  apiId: id-${i}\n  definitionFile: ../oas/${file}\n`;
  });
  const root = await tempRepo(resources);
  await mkdir(path.join(root, "oas"));
  for (const file of files) await copyFile(path.join(corpus, dir, file), path.join(root, "oas", file));
  return { root, names };
}

describe("the OpenAPI corpus", () => {
  // The OpenAPI schema accepts these; the production gateway's semantic checks refuse them
  // (an example fragment: its {id} has a parameter petId, its security scheme is not declared).
  const refusedByGateway: Record<string, string[]> = {
    "3.0/pass": [],
    "3.1/pass": ["operation-object-example.yaml"],
  };

  it.each(["3.0/pass", "3.1/pass"])("loads every document of %s as an ApiDefinition body, but those the gateway's semantic checks refuse", async (dir) => {
    const { root, names } = await asApiDefinitions(dir);
    const result = await validator.validate({ root });
    const errors = result.diagnostics.filter((d) => d.severity === "error");
    const refused = refusedByGateway[dir]!;
    expect(errors.filter((d) => !refused.some((f) => d.file === `oas/${f}`))).toEqual([]);
    for (const f of refused) expect(errors.filter((d) => d.file === `oas/${f}`).map((d) => d.code)).toEqual(expect.arrayContaining(["OPENAPI_INVALID"]));
    expect(result.resources).toHaveLength(names.length - refused.length);
    expect(names.length).toBeGreaterThan(5);
  });

  it("rejects every document of 3.1/fail, each with a located OpenAPI error", async () => {
    const { root, names } = await asApiDefinitions("3.1/fail");
    const result = await validator.validate({ root });
    const rejectedFiles = new Set(result.diagnostics.filter((d) => d.severity === "error").map((d) => d.file));
    const rejected = names.filter((n) => rejectedFiles.has(`oas/${n}`));
    // docs/user/resource-files.md states this figure: 11 of 11.
    expect({ rejected: rejected.length, of: names.length }).toEqual({ rejected: 11, of: 11 });
    expect(result.resources).toEqual([]);
    for (const d of result.diagnostics) expect(d.line).toBeGreaterThan(0);
  });
});
