/**
 * A repository held in memory (ValidateOptions.held, what `gatesync import` checks before it
 * writes): the same validator gives the same findings, located the same, as it gives of the same
 * texts written to disk — per-document checks, an attached document's, cross-checks (a duplicate
 * name, a reference to nothing) and a missing definitionFile — and reads no file to do so.
 */
import { rm } from "node:fs/promises";
import { afterAll, describe, expect, it } from "vitest";
import { parseYaml } from "../../src/load/yaml-reader.js";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const document = (listen: unknown): string =>
  `${JSON.stringify(
    {
      openapi: "3.0.3",
      info: { title: "T", version: "1" },
      paths: {},
      "x-gw-api-gateway": {
        info: { id: "a1", name: "A", state: { active: true } },
        upstream: { url: listen },
        server: { listenPath: { value: "/a/", strip: true } },
      },
    },
    null,
    2,
  )}\n`;

const texts: Record<string, string> = {
  "api-definitions/a.yaml":
    "# imported\napiVersion: gatesync.dev/v1\nkind: ApiDefinition\nmetadata:\n  name: a\nspec:\n  apiId: a1\n  definitionFile: a.openapi.json\n",
  "api-definitions/a.openapi.json": document(42),
  "api-definitions/b.yaml": "apiVersion: gatesync.dev/v1\nkind: ApiDefinition\nmetadata:\n  name: b\nspec:\n  apiId: b1\n  definitionFile: missing.json\n",
  "org-keys/k.yaml": "apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata:\n  name: k\nspec:\n  keyId: k\n  rate: -1\n",
  "org-keys/k2.yaml": "apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata:\n  name: k\nspec:\n  keyId: k2\n  rate: 1\n  per: 1\n",
  "oauth-clients/c.yaml":
    "apiVersion: gatesync.dev/v1\nkind: OAuthClient\nmetadata:\n  name: c\nspec:\n  apiRef: nowhere\n  clientId: c1\n  secret: ${env:C_SECRET}\n  redirectUri: https://x.example/cb\n",
};

describe("a repository held in memory", () => {
  it("gets the findings, located the same, that the same files on disk get", async () => {
    const dir = await tempRepo(texts);
    const onDisk = await new RepositoryValidator({ workers: { threads: 0 }, reuse: false }).validate({ root: dir });
    expect(onDisk.diagnostics.map((d) => `${d.code} ${d.file}:${d.line}:${d.column}`)).toEqual([
      "SCHEMA_VIOLATION api-definitions/a.openapi.json:17:14",
      "DEFINITION_FILE api-definitions/b.yaml:7:19",
      "SCHEMA_VIOLATION oauth-clients/c.yaml:9:3",
      "DUPLICATE_NAME org-keys/k.yaml:4:9",
      "DUPLICATE_NAME org-keys/k2.yaml:4:9",
    ]);
    const held = new Map(Object.entries(texts).map(([p, text]) => [p, { text, documents: parseYaml(text, p).documents }]));
    // nothing to read: the directory is gone
    await rm(dir, { recursive: true, force: true });
    const inMemory = await new RepositoryValidator({ workers: { threads: 0 }, reuse: false }).validate({ root: dir, held });
    expect(inMemory.diagnostics).toEqual(onDisk.diagnostics);
    expect(inMemory.resources.map((r) => `${r.kind}/${r.name}`)).toEqual(onDisk.resources.map((r) => `${r.kind}/${r.name}`));
  });
});
