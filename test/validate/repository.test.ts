/**
 * Validating a repository: the example one and a broken copy, its files (encodings, syntax,
 * limits, links), definition files, incremental loading. What its resources refer to:
 * repository-references.test.ts.
 */
import { cp, readFile, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { loadConfig } from "../../src/config/config.js";
import { isDocumentRef, materialize } from "../../src/kinds/document-ref.js";
import type { Diagnostic } from "../../src/errors.js";
import { validateDirectory } from "../../src/cli/commands/validate/action.js";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import { positionOf, projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { apiDefinition, orgKey } from "../helpers/resources.js";

const validator = new RepositoryValidator();

function indexByFile(diagnostics: readonly Diagnostic[]): Record<string, Diagnostic> {
  return Object.fromEntries(diagnostics.map((d) => [d.file ?? "", d]));
}
afterAll(removeTempRepos);

describe("the example repository", () => {
  it("is valid with its config and has every kind", async () => {
    const config = await loadConfig(path.join(projectRoot, "examples/gatesync.yaml"));
    const result = await validateDirectory(path.join(projectRoot, "examples/config"), config, {});
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(result.valid).toBe(true);
    const kinds = new Set(result.resources.map((r) => r.kind));
    expect([...kinds].sort()).toEqual([
      "ApiDefinition",
      "ApiProduct",
      "ClientType",
      "DashboardWebhook",
      "LlmSettings",
      "OAuthClient",
      "OrgKey",
      "PortalWebhook",
    ]);
    // secrets by reference: unset env vars are one notice in validate, never errors
    expect(result.diagnostics).toEqual([expect.objectContaining({ code: "SECRET_UNRESOLVED", severity: "info" })]);
    // the definitionFile is the resource's definition: held by reference, read again on demand
    const petstore = result.resources.find((r) => r.name === "petstore")!;
    expect(isDocumentRef(petstore.spec.read().definition)).toBe(true);
    expect((materialize(petstore.spec.read().definition) as { info: { title: string } }).info.title).toBe("Swagger Petstore");
    expect(petstore.definitionSource?.file).toBe("openapi/petstore.yaml");
  });

  it("reports every error planted in a broken copy, each at its line", async () => {
    const dir = await tempRepo();
    await cp(path.join(projectRoot, "examples/config"), dir, { recursive: true });
    const edit = async (file: string, from: string, to: string, token = to.trim()): Promise<{ line: number; column: number }> => {
      const full = path.join(dir, file);
      const text = await readFile(full, "utf8");
      expect(text).toContain(from);
      const next = text.replace(from, to);
      await writeFile(full, next);
      return positionOf(next, token);
    };
    const planted = [
      { code: "SCHEMA_VIOLATION", file: "portal/webhooks.yaml", ...(await edit("portal/webhooks.yaml", "Timeout: 10", "Timeout: -3")) },
      {
        code: "UNRESOLVED_REFERENCE",
        file: "gateway/oauth-clients.yaml",
        ...(await edit("gateway/oauth-clients.yaml", "apiRef: petstore\n", "apiRef: petstor\n")),
      },
      {
        code: "SCHEMA_VIOLATION",
        file: "portal/client-types.yaml",
        ...(await edit("portal/client-types.yaml", "GrantType: client_credentials", "GrantType: client_credentials,magic")),
      },
      {
        code: "SCHEMA_VIOLATION",
        file: "portal/products.yaml",
        ...(await edit("portal/products.yaml", "IsDocumentationOnly: false", "IsDocumentationOnly: true")),
      },
      { code: "SCHEMA_VIOLATION", file: "dashboard/webhooks.yaml", ...(await edit("dashboard/webhooks.yaml", "method: PUT", "method: FETCH")) },
      { code: "SCHEMA_VIOLATION", file: "llm/settings.yaml", ...(await edit("llm/settings.yaml", "temperature: 0.0", "temperature: cold")) },
      { code: "RULE_VIOLATION", file: "apis/orders.yaml", ...(await edit("apis/orders.yaml", "id: orders-api", "id: orders-apx")) },
      {
        code: "YAML_DUPLICATE_KEY",
        file: "gateway/org-keys.yaml",
        ...(await edit("gateway/org-keys.yaml", "  alias: Globex\n", "  alias: Globex\n  alias: Globex Inc\n", "alias: Globex Inc")),
      },
    ];
    // the planted positions point at the edited token; fix up ones that point at keys or values
    const result = await validator.validate({ root: dir });
    const errors = result.diagnostics.filter((d) => d.severity === "error");
    for (const p of planted) {
      const hit = errors.find((d) => d.file === p.file && d.code === p.code && d.line === p.line);
      expect(hit, `${p.code} at ${p.file}:${p.line} in ${JSON.stringify(errors, null, 1)}`).toBeDefined();
    }
    expect(errors.map((d) => `${d.code} ${d.file}:${d.line}`).sort()).toEqual(planted.map((p) => `${p.code} ${p.file}:${p.line}`).sort());
    // resources not touched by an error are still returned
    expect(result.resources.map((r) => r.name)).toContain("uspto");
  });
});

describe("files", () => {
  it("reads several documents per file, JSON files, and skips hidden files and directories", async () => {
    const dir = await tempRepo({
      "keys.yaml": `${orgKey({ name: "a" })}---\n${orgKey({ name: "b" })}---\n`,
      "more/c.json": JSON.stringify({ apiVersion: "gatesync.dev/v1", kind: "OrgKey", metadata: { name: "c" }, spec: { keyId: "c" } }),
      ".hidden.yaml": "not: [valid",
      ".git/config.yaml": "not: [valid",
      "notes.txt": "ignored",
    });
    const result = await validator.validate({ root: dir });
    expect(result.diagnostics).toEqual([]);
    expect(result.resources.map((r) => r.name)).toEqual(["a", "b", "c"]);
    expect(result.resources[1]!.source).toEqual({ file: "keys.yaml", index: 1, line: 8 });
  });

  it("handles a byte-order mark and CRLF line ends with correct positions", async () => {
    const text = `\ufeff${orgKey({ name: "a", spec: "rate: fast" })}`.replace(/\n/g, "\r\n");
    const dir = await tempRepo({ "k.yaml": text });
    const result = await validator.validate({ root: dir });
    expect(result.diagnostics).toHaveLength(1);
    expect(result.diagnostics[0]).toMatchObject({ code: "SCHEMA_VIOLATION", line: 7, column: 9, path: "spec.rate" });
  });

  it("refuses binary files, invalid UTF-8 and oversized files, and keeps going", async () => {
    const dir = await tempRepo({
      "bin.yaml": new Uint8Array([0x61, 0x3a, 0x00, 0x01]),
      "latin1.yaml": Buffer.concat([Buffer.from("a: 1\nb: caf"), Buffer.from([0xe9]), Buffer.from("\n")]),
      "big.yaml": `x: "${"a".repeat(4096)}"\n`,
      "ok.yaml": orgKey({ name: "ok" }),
    });
    const result = await validator.validate({ root: dir, limits: { maxFileBytes: 2048 } });
    const byFile = indexByFile(result.diagnostics);
    expect(byFile["bin.yaml"]).toMatchObject({ code: "FILE_NOT_TEXT" });
    expect(byFile["latin1.yaml"]).toMatchObject({ code: "FILE_NOT_TEXT", line: 2 });
    expect(byFile["big.yaml"]).toMatchObject({ code: "FILE_TOO_LARGE" });
    expect(result.resources.map((r) => r.name)).toEqual(["ok"]);
  });

  it("reports syntax errors with their position", async () => {
    const dir = await tempRepo({ "bad.yaml": "apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: x\n" });
    const result = await validator.validate({ root: dir });
    expect(result.diagnostics).toEqual([
      expect.objectContaining({ code: "YAML_SYNTAX", file: "bad.yaml", line: 4, message: expect.stringContaining("end with a }") as string }),
    ]);
  });

  it("refuses alias bombs and absurd nesting without hanging or crashing", async () => {
    const bomb = [
      "a: &a [x, x, x, x, x, x, x, x, x, x]",
      "b: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a, *a]",
      "c: &c [*b, *b, *b, *b, *b, *b, *b, *b, *b, *b]",
      "d: &d [*c, *c, *c, *c, *c, *c, *c, *c, *c, *c]",
      "e: [*d, *d, *d, *d, *d, *d, *d, *d, *d, *d]",
    ].join("\n");
    const deep = `${"[".repeat(10_000)}${"]".repeat(10_000)}\n`;
    const deepMap = `${Array.from({ length: 300 }, (_, i) => `${"  ".repeat(i)}k${i}:`).join("\n")} 1\n`;
    const dir = await tempRepo({ "bomb.yaml": bomb, "deep.yaml": deep, "deep-map.yaml": deepMap, "ok.yaml": orgKey({ name: "ok" }) });
    const result = await validator.validate({ root: dir });
    const codes = Object.fromEntries(result.diagnostics.map((d) => [d.file ?? "", d.code]));
    expect(codes["bomb.yaml"]).toBe("YAML_ALIAS_LIMIT");
    expect(codes["deep.yaml"]).toBe("YAML_TOO_DEEP");
    expect(codes["deep-map.yaml"]).toBe("YAML_TOO_DEEP");
    expect(result.resources.map((r) => r.name)).toEqual(["ok"]);
  });

  it("says what a non-resource document is, and only warns about unused OpenAPI documents", async () => {
    const dir = await tempRepo({
      "list.yaml": "- a\n- b\n",
      "random.yaml": "hello: world\n",
      "spare-openapi.yaml": "openapi: 3.1.0\ninfo: { title: t, version: '1' }\npaths: {}\n",
    });
    const result = await validator.validate({ root: dir });
    const byFile = indexByFile(result.diagnostics);
    expect(byFile["list.yaml"]).toMatchObject({ code: "NOT_A_RESOURCE", severity: "error" });
    expect(byFile["random.yaml"]).toMatchObject({ code: "NOT_A_RESOURCE", severity: "error", line: 1 });
    expect(byFile["spare-openapi.yaml"]).toMatchObject({ code: "NOT_A_RESOURCE", severity: "warning" });
  });

  it("refuses a symbolic link that leaves the repository", async () => {
    const outside = await tempRepo({ "secret.yaml": orgKey({ name: "outside" }) });
    const dir = await tempRepo({ "ok.yaml": orgKey({ name: "ok" }) });
    await symlink(path.join(outside, "secret.yaml"), path.join(dir, "link.yaml"));
    await symlink(outside, path.join(dir, "linkdir"));
    const result = await validator.validate({ root: dir });
    expect(
      result.diagnostics
        .filter((d) => d.code === "PATH_ESCAPE")
        .map((d) => d.file)
        .sort(),
    ).toEqual(["link.yaml", "linkdir"]);
    expect(result.resources.map((r) => r.name)).toEqual(["ok"]);
  });

  it("follows a symbolic link inside the repository once, even when it loops", async () => {
    const dir = await tempRepo({ "real/k.yaml": orgKey({ name: "k" }) });
    await symlink(path.join(dir, "real"), path.join(dir, "real", "loop"));
    const result = await validator.validate({ root: dir });
    expect(result.resources.map((r) => r.name)).toEqual(["k"]);
  });
});

describe("definitionFile", () => {
  const oas = "openapi: 3.1.0\ninfo:\n  title: T\n  version: '1'\npaths: {}\n";

  it("is read relative to the resource file, and errors inside it point into it", async () => {
    const badOas = "openapi: 3.1.0\ninfo:\n  title: T\n  version: '1'\nservers: nope\n";
    const dir = await tempRepo({
      "apis/a.yaml": apiDefinition({ name: "a", spec: "definitionFile: ../oas/a.yaml" }),
      "apis/b.yaml": apiDefinition({ name: "b", spec: "definitionFile: ../oas/b.json" }),
      "oas/a.yaml": oas,
      "oas/b.json": JSON.stringify({ openapi: "3.1.0", info: { title: "T", version: "1" }, servers: "nope" }, null, 2),
      "apis/c.yaml": apiDefinition({ name: "c", spec: "definitionFile: ../oas/c.yaml" }),
      "oas/c.yaml": badOas,
    });
    const result = await validator.validate({ root: dir });
    expect(result.resources.map((r) => r.name)).toEqual(["a"]);
    const b = result.diagnostics.find((d) => d.file === "oas/b.json");
    expect(b).toMatchObject({ resource: "ApiDefinition/b", path: "servers", line: 7, column: 14 });
    const c = result.diagnostics.find((d) => d.file === "oas/c.yaml");
    expect(c).toMatchObject({ resource: "ApiDefinition/c", path: "servers", ...positionOf(badOas, "nope") });
  });

  it("may not leave the repository, must exist, and must hold one document", async () => {
    const dir = await tempRepo({
      "a.yaml": apiDefinition({ name: "a", spec: "definitionFile: ../../../../etc/passwd" }),
      "b.yaml": apiDefinition({ name: "b", spec: "definitionFile: missing.yaml" }),
      "c.yaml": apiDefinition({ name: "c", spec: "definitionFile: two.yaml" }),
      "two.yaml": `${oas}---\n${oas}`,
    });
    const result = await validator.validate({ root: dir });
    const byFile = indexByFile(result.diagnostics);
    expect(byFile["a.yaml"]).toMatchObject({ code: "PATH_ESCAPE", path: "spec.definitionFile", line: 7 });
    expect(byFile["b.yaml"]).toMatchObject({ code: "DEFINITION_FILE", line: 7 });
    expect(byFile["c.yaml"]).toMatchObject({ code: "DEFINITION_FILE", message: expect.stringMatching(/2 documents/) as string });
    expect(result.resources).toEqual([]);
  });

  it("may reach outside the resource directory but inside the repository boundary", async () => {
    const repo = await tempRepo({ "config/a.yaml": apiDefinition({ name: "a", spec: "definitionFile: ../specs/a.yaml" }), "specs/a.yaml": oas });
    const inside = await validator.validate({ root: path.join(repo, "config"), boundary: repo });
    expect(inside.resources.map((r) => r.name)).toEqual(["a"]);
    const confined = await validator.validate({ root: path.join(repo, "config") });
    expect(confined.diagnostics[0]).toMatchObject({ code: "PATH_ESCAPE" });
  });
});

describe("incremental loading", () => {
  it("re-reads only the files that changed since the last run, with the same result as a fresh run", async () => {
    const own = new RepositoryValidator();
    const dir = await tempRepo({ "a.yaml": orgKey({ name: "a" }), "b.yaml": orgKey({ name: "b" }), "c.yaml": orgKey({ name: "c", spec: "rate: x" }) });
    const first = await own.validate({ root: dir });
    expect(first.stats).toEqual({ filesRead: 3, filesReused: 0 });
    const again = await own.validate({ root: dir });
    expect(again.stats).toEqual({ filesRead: 0, filesReused: 3 });
    expect(again.diagnostics).toEqual(first.diagnostics);
    await new Promise((r) => setTimeout(r, 5));
    await writeFile(path.join(dir, "b.yaml"), orgKey({ name: "b", spec: "rate: 7" }));
    await writeFile(path.join(dir, "d.yaml"), orgKey({ name: "d" }));
    const changed = await own.validate({ root: dir });
    expect(changed.stats).toEqual({ filesRead: 2, filesReused: 2 });
    const fresh = await new RepositoryValidator().validate({ root: dir });
    expect(changed.diagnostics).toEqual(fresh.diagnostics);
    expect(changed.resources).toEqual(fresh.resources);
    expect(changed.resources.find((r) => r.name === "b")?.spec.read().rate).toBe(7);
  });
});
