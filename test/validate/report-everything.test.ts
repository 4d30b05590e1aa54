import { afterAll, describe, expect, it } from "vitest";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import { positionOf, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { apiDefinition, doc } from "../helpers/resources.js";

afterAll(removeTempRepos);
const validator = new RepositoryValidator();
const validate = async (files: Record<string, string>) => (await validator.validate({ root: await tempRepo(files) })).diagnostics;

describe("validate reports every problem at once", () => {
  it("reports duplicate names and identities together with the schema errors of those resources", async () => {
    const diagnostics = await validate({
      "a.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: fast"),
      "b.yaml": doc("OrgKey", "acme", "keyId: org-acme-2\nrate: 5"),
      "c.yaml": doc("OrgKey", "globex", "keyId: org-acme\nper: never"),
    });
    expect(diagnostics.map((d) => [d.code, d.file])).toEqual([
      ["DUPLICATE_NAME", "a.yaml"],
      ["SCHEMA_VIOLATION", "a.yaml"],
      ["DUPLICATE_NAME", "b.yaml"],
      ["DUPLICATE_IDENTITY", "c.yaml"],
      ["SCHEMA_VIOLATION", "c.yaml"],
    ]);
    expect(diagnostics.find((d) => d.code === "DUPLICATE_IDENTITY")!.message).toContain(
      "OrgKey/globex and OrgKey/acme (a.yaml:1) address the same server object (org-key:org-acme)",
    );
  });

  it("suggests a reference's target that is excluded for another error", async () => {
    const diagnostics = await validate({
      "apis.yaml": [
        doc("ApiDefinition", "weather", "apiId: weather-v1\ndefinition: { openapi: 3.0.3, info: { title: W, version: '1' }, paths: {} }"),
        doc("ApiDefinition", "billing", "apiId: 7"),
      ].join("---\n"),
      "client.yaml": doc("OAuthClient", "c", "apiRef: biling\nclientId: c1"),
    });
    const unresolved = diagnostics.find((d) => d.code === "UNRESOLVED_REFERENCE")!;
    expect(unresolved.hint).toContain("did you mean `billing`?");
    expect(unresolved.hint).toContain("known: billing, weather");
  });
});

describe("OpenAPI errors", () => {
  const shared = 'openapi: 3.0.3\ninfo: { title: A, version: "1" }\npaths:\n  /pets:\n    get:\n      responses:\n        "200":\n          descriptoin: ok\n';

  it("reports an error in a response object once, at the misspelt member, even when two APIs share the document", async () => {
    const diagnostics = await validate({
      "apis/one.yaml": apiDefinition({ name: "one", apiId: "one-v1", spec: "definitionFile: ../openapi/shared.yaml" }),
      "apis/two.yaml": apiDefinition({ name: "two", apiId: "two-v1", spec: "definitionFile: ../openapi/shared.yaml" }),
      "openapi/shared.yaml": shared,
    });
    expect(diagnostics).toHaveLength(1);
    expect(diagnostics[0]).toMatchObject({
      code: "OPENAPI_INVALID",
      file: "openapi/shared.yaml",
      ...positionOf(shared, "descriptoin"),
      path: 'paths["/pets"].get.responses[200].descriptoin',
      message: "unknown field `descriptoin`: the required `description` is missing",
      hint: "did you mean `description`?",
    });
  });

  it("reports every error of a document, not the first, and names a `null` as null", async () => {
    // three mistakes far apart: a missing version, a misspelt member, a parameter schema left empty
    const broken =
      'openapi: 3.0.3\ninfo: { title: A }\npaths:\n  /pets:\n    get:\n      responses:\n        "200":\n          descriptoin: ok\n  /owners:\n    get:\n      parameters:\n        - { name: q, in: query, schema: null }\n      responses:\n        "200": { description: ok }\n';
    const diagnostics = await validate({
      "apis/one.yaml": apiDefinition({ name: "one", apiId: "one-v1", spec: "definitionFile: ../openapi/shared.yaml" }),
      "openapi/shared.yaml": broken,
    });
    expect(diagnostics.map((d) => [d.code, d.path, d.message])).toEqual([
      ["OPENAPI_INVALID", "info", "missing required field `version`"],
      ["OPENAPI_INVALID", 'paths["/pets"].get.responses[200].descriptoin', "unknown field `descriptoin`: the required `description` is missing"],
      ["OPENAPI_INVALID", 'paths["/owners"].get.parameters[0].schema', "must be object, not null"],
    ]);
    expect(diagnostics[2]).toMatchObject({ file: "openapi/shared.yaml", ...positionOf(broken, "null") });
  });

  it("suggests the file meant by a wrong definitionFile path", async () => {
    const diagnostics = await validate({
      "apis/one.yaml": doc("ApiDefinition", "one", "apiId: one-v1\ndefinitionFile: ../openapi/shraed.yaml"),
      "openapi/shared.yaml": shared.replace("descriptoin", "description"),
    });
    expect(diagnostics.filter((d) => d.severity === "error")).toEqual([
      expect.objectContaining({
        code: "DEFINITION_FILE",
        message: "definitionFile `../openapi/shraed.yaml` does not exist",
        hint: "did you mean `../openapi/shared.yaml`? the path is relative to apis/one.yaml",
      }),
    ]);
  });
});
