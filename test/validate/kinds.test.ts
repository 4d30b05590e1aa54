/**
 * Table-driven: for each kind, a valid resource, and invalid variants each expected to give
 * one precise finding (code, field path, and the exact line:column of the offending token).
 */
import { afterAll, describe, expect, it } from "vitest";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import { positionOf, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { petstore, valid } from "./kind-cases.js";
import { gatewayKindCases } from "./kind-cases-gateway.js";
import { otherKindCases } from "./kind-cases-other.js";

const validator = new RepositoryValidator();
afterAll(removeTempRepos);

const cases = [...gatewayKindCases, ...otherKindCases];

describe("each kind", () => {
  it.each(Object.entries(valid))("accepts a valid %s", async (kind, yaml) => {
    const files: Record<string, string> = { "r.yaml": yaml };
    if (kind !== "ApiDefinition") files["api.yaml"] = petstore;
    const dir = await tempRepo(files);
    const result = await validator.validate({ root: dir });
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(result.resources.map((r) => r.kind)).toContain(kind);
  });

  it.each(cases)("reports $name", async (c) => {
    const dir = await tempRepo({ "r.yaml": c.yaml });
    const result = await validator.validate({ root: dir, ...(c.appTypeProviders === undefined ? {} : { appTypeProviders: new Set(c.appTypeProviders) }) });
    const found = result.diagnostics.filter((d) => d.code === c.code);
    expect(found, JSON.stringify(result.diagnostics, null, 2)).toHaveLength(1);
    const d = found[0]!;
    expect(d.severity).toBe(c.severity ?? "error");
    expect(d.file).toBe("r.yaml");
    expect(d.message).toMatch(c.message);
    if (c.path !== undefined) expect(d.path).toBe(c.path);
    expect({ line: d.line, column: d.column }).toEqual(positionOf(c.yaml, c.at));
    if ((c.severity ?? "error") === "error") expect(result.resources.map((r) => `${r.kind}/${r.name}`)).not.toContain(d.resource ?? "-");
  });
});
