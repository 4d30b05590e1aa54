/**
 * Validating a repository, what its resources refer to: each other (names unique per kind,
 * references that resolve, one resource per server object) and secrets (present, long enough to
 * scrub, inside the secrets directory).
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { EnvFileSecretSource } from "../../src/secrets/env-file-source.js";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { apiDefinition, orgKey } from "../helpers/resources.js";

const validator = new RepositoryValidator();

afterAll(removeTempRepos);

describe("across resources", () => {
  it("reports duplicate names at every definition, each naming the others' places (the new file may sort first)", async () => {
    const dir = await tempRepo({ "a.yaml": orgKey({ name: "same", keyId: "k1" }), "b.yaml": orgKey({ name: "same", keyId: "k2" }) });
    const result = await validator.validate({ root: dir });
    expect(result.diagnostics).toEqual([
      expect.objectContaining({ code: "DUPLICATE_NAME", file: "a.yaml", line: 4, message: expect.stringContaining("also at b.yaml:1") as string }),
      expect.objectContaining({ code: "DUPLICATE_NAME", file: "b.yaml", line: 4, message: expect.stringContaining("also at a.yaml:1") as string }),
    ]);
    expect(result.resources.map((r) => r.source.file)).toEqual(["a.yaml"]);
  });

  it("reports a name defined three times at each definition, naming the other two", async () => {
    const dir = await tempRepo({
      "a.yaml": orgKey({ name: "same", keyId: "k1" }),
      "b.yaml": orgKey({ name: "same", keyId: "k2" }),
      "c.yaml": orgKey({ name: "same", keyId: "k3" }),
    });
    const result = await validator.validate({ root: dir });
    expect(result.diagnostics).toEqual([
      expect.objectContaining({ code: "DUPLICATE_NAME", file: "a.yaml", message: "OrgKey/same is defined 3 times; also at b.yaml:1, c.yaml:1" }),
      expect.objectContaining({ code: "DUPLICATE_NAME", file: "b.yaml", message: "OrgKey/same is defined 3 times; also at a.yaml:1, c.yaml:1" }),
      expect.objectContaining({ code: "DUPLICATE_NAME", file: "c.yaml", message: "OrgKey/same is defined 3 times; also at a.yaml:1, b.yaml:1" }),
    ]);
    expect(result.resources.map((r) => r.source.file)).toEqual(["a.yaml"]);
  });

  it("suggests for a missing reference the names written for its kind only, a broken definition's too; following it resolves the reference", async () => {
    const client = (name: string, apiRef: string): string =>
      `apiVersion: gatesync.dev/v1\nkind: OAuthClient\nmetadata:\n  name: ${name}\nspec:\n  apiRef: ${apiRef}\n  clientId: ${name}\n`;
    const dir = await tempRepo({
      // an org key named like the reference, and an API whose own spec is broken: only the API's name is offered
      "a.yaml": `${orgKey({ name: "payment" })}---\n${apiDefinition({ name: "payments", spec: "definition: 42" })}`,
      // three references to the one missing name: each told the same
      "c.yaml": ["c1", "c2", "c3"].map((n) => client(n, "payment")).join("---\n"),
    });
    const unresolved = (await validator.validate({ root: dir })).diagnostics.filter((d) => d.code === "UNRESOLVED_REFERENCE");
    expect(unresolved).toHaveLength(3);
    for (const d of unresolved) expect(d).toMatchObject({ path: "spec.apiRef", hint: "did you mean `payments`? (known: payments)" });
    await writeFile(path.join(dir, "c.yaml"), ["c1", "c2", "c3"].map((n) => client(n, "payments")).join("---\n"));
    expect((await validator.validate({ root: dir })).diagnostics.filter((d) => d.code === "UNRESOLVED_REFERENCE")).toEqual([]);
  });

  it("names ten other places of a name defined many times, and counts the rest", async () => {
    const files = Object.fromEntries(
      Array.from({ length: 25 }, (_, i) => [`k${String(i).padStart(2, "0")}.yaml`, orgKey({ name: "same", keyId: `key-${i}` })]),
    );
    const result = await validator.validate({ root: await tempRepo(files) });
    const duplicates = result.diagnostics.filter((d) => d.code === "DUPLICATE_NAME");
    expect(duplicates).toHaveLength(25);
    const places = (from: number, to: number): string => Array.from({ length: to - from }, (_, i) => `k${String(from + i).padStart(2, "0")}.yaml:1`).join(", ");
    expect(duplicates[0]!.message).toBe(`OrgKey/same is defined 25 times; also at ${places(1, 11)}, and 14 more`);
    expect(duplicates[24]!.message).toBe(`OrgKey/same is defined 25 times; also at ${places(0, 10)}, and 14 more`);
    expect(result.resources.map((r) => r.source.file)).toEqual(["k00.yaml"]);
  });

  it("allows the same name in different kinds", async () => {
    const dir = await tempRepo({
      "a.yaml": `${orgKey({ name: "x" })}---\n${apiDefinition({ name: "x", spec: "definition: { openapi: 3.1.0, info: { title: t, version: '1' }, paths: {} }" })}`,
    });
    expect((await validator.validate({ root: dir })).diagnostics).toEqual([]);
  });

  it("reports two resources addressing the same server object, by raw id or by reference", async () => {
    const client = (name: string, apiLine: string): string =>
      `apiVersion: gatesync.dev/v1\nkind: OAuthClient\nmetadata:\n  name: ${name}\nspec:\n  ${apiLine}\n  clientId: shared\n`;
    const dir = await tempRepo({
      "keys.yaml": `${orgKey({ name: "one", keyId: "org-1" })}---\n${orgKey({ name: "two", keyId: "org-1" })}`,
      "api.yaml": apiDefinition({ name: "pets", spec: "definition: { openapi: 3.1.0, info: { title: t, version: '1' }, paths: {} }" }),
      "clients.yaml": `${client("by-ref", "apiRef: pets")}---\n${client("by-id", "apiId: pets-id")}`,
    });
    const result = await validator.validate({ root: dir });
    const dups = result.diagnostics.filter((d) => d.code === "DUPLICATE_IDENTITY");
    expect(dups.map((d) => d.resource).sort()).toEqual(["OAuthClient/by-id", "OrgKey/two"]);
    expect(dups.find((d) => d.resource === "OrgKey/two")?.message).toContain("org-key:org-1");
  });

  it("reports every problem of a repository at once, sorted by file and line", async () => {
    const dir = await tempRepo({
      "a.yaml": orgKey({ name: "a", spec: "rate: x\nper: y" }),
      "b.yaml": "kind: [",
      "c.yaml": orgKey({ name: "c", spec: "unknown: 1" }),
    });
    const result = await validator.validate({ root: dir });
    expect(result.diagnostics.map((d) => `${d.file}:${d.line}`)).toEqual(["a.yaml:7", "a.yaml:8", "b.yaml:1", "c.yaml:7"]);
  });
});

describe("secret references", () => {
  const client = (secret: string): string =>
    `apiVersion: gatesync.dev/v1\nkind: OAuthClient\nmetadata:\n  name: c\nspec:\n  apiId: a\n  clientId: c\n  secret: ${secret}\n`;

  it("names a missing secret in one notice of validate, and accepts a present one", async () => {
    const secretsDir = await tempRepo({ "s.txt": "the-file-secret-value" });
    const dir = await tempRepo({
      "a.yaml": client("${env:MISSING_ONE}"),
      "b.yaml": client("${file:s.txt}").replace("name: c", "name: d").replace("clientId: c", "clientId: d"),
    });
    const result = await validator.validate({ root: dir, secrets: { source: new EnvFileSecretSource({}, secretsDir), missing: "warning" } });
    expect(result.diagnostics).toEqual([expect.objectContaining({ code: "SECRET_UNRESOLVED", severity: "info" })]);
    expect(result.diagnostics[0]!.file).toBeUndefined();
    expect(result.diagnostics[0]!.message).toMatch(/^1 secret reference\(s\) cannot be resolved here \(\$\{env:MISSING_ONE\}\)/);
    expect(result.resources).toHaveLength(2);
    // never the value
    expect(JSON.stringify(result.diagnostics)).not.toContain("the-file-secret");
  });

  it("warns once, at its first use, about a secret too short to be scrubbed, however many resources use it", async () => {
    const uses = ["a", "b", "c"].map((n) => [`${n}.yaml`, client("${env:SHORT}").replaceAll(": c\n", `: ${n}\n`)] as const);
    const dir = await tempRepo(Object.fromEntries(uses));
    const result = await validator.validate({ root: dir, secrets: { source: new EnvFileSecretSource({ SHORT: "pw1" }, dir), missing: "error" } });
    expect(result.diagnostics).toEqual([
      expect.objectContaining({ code: "SECRET_TOO_SHORT", severity: "warning", file: "a.yaml", line: 8, column: 11, resource: "OAuthClient/a" }),
    ]);
    expect(result.diagnostics[0]?.message).toContain("${env:SHORT}");
    expect(JSON.stringify(result.diagnostics)).not.toContain("pw1");
    expect(result.resources).toHaveLength(3);
  });

  it("refuses a file reference that leaves the secrets directory", async () => {
    const secretsDir = await tempRepo({ "s.txt": "v" });
    await mkdir(path.join(secretsDir, "sub"));
    const dir = await tempRepo({ "a.yaml": client("${file:../../etc/passwd}") });
    const result = await validator.validate({ root: dir, secrets: { source: new EnvFileSecretSource({}, path.join(secretsDir, "sub")), missing: "warning" } });
    expect(result.diagnostics).toEqual([expect.objectContaining({ code: "PATH_ESCAPE", severity: "error" })]);
    expect(result.resources).toEqual([]);
  });

  it("treats $${ as a literal, not a reference", async () => {
    const dir = await tempRepo({ "a.yaml": client("'$${env:not a ref}'") });
    const result = await validator.validate({ root: dir, secrets: { source: new EnvFileSecretSource({}, dir), missing: "error" } });
    expect(result.diagnostics).toEqual([]);
  });
});
