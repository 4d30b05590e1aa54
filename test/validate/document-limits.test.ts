/**
 * Documents are counted before a file is parsed in full: past limits.maxDocumentsPerFile the
 * file is refused, located at the first document past the limit; past limits.maxDocuments the
 * repository is (each with the setting to raise named in the hint).
 */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { parseYaml } from "../../src/load/yaml-reader.js";
import { runCli } from "../helpers/cli.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
const limits = { maxAliasCount: 100, maxDepth: 128, maxDocumentsPerFile: 3 };

describe("document limits", () => {
  it("refuses a file past maxDocumentsPerFile, empty documents counted, at the first one past it", () => {
    const parsed = parseYaml("a: 1\n---\nb: 2\n---\n---\n---\nc: 3\n", "f.yaml", limits);
    expect(parsed.documents).toEqual([]);
    expect(parsed.diagnostics).toEqual([
      expect.objectContaining({
        code: "YAML_TOO_MANY_DOCUMENTS",
        file: "f.yaml",
        line: 5,
        hint: expect.stringContaining("limits.maxDocumentsPerFile") as string,
      }),
    ]);
    expect(parseYaml("a: 1\n---\nb: 2\n---\n", "f.yaml", limits).diagnostics).toEqual([]);
  });

  it("stops counting 1.3 million empty documents at the limit, quickly", () => {
    const t0 = performance.now();
    const parsed = parseYaml("---\n".repeat(1_310_000), "empty.yaml", { ...limits, maxDocumentsPerFile: 1000 });
    expect(parsed.diagnostics[0]).toMatchObject({ code: "YAML_TOO_MANY_DOCUMENTS", line: 1001 });
    expect(performance.now() - t0).toBeLessThan(2000);
  });

  it("refuses a repository past limits.maxDocuments, naming the setting", async () => {
    const dir = await tempRepo({
      "config/a.yaml": `${doc("OrgKey", "a", "keyId: a")}---\n${doc("OrgKey", "b", "keyId: b")}`,
      "config/c.yaml": doc("OrgKey", "c", "keyId: c"),
      "gatesync.yaml":
        "apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\ntargets:\n  gateway: { url: http://127.0.0.1:1, credentialEnv: GW_KEY }\nlimits: { maxDocuments: 2 }\n",
    });
    const r = await runCli(["validate", "--config", path.join(dir, "gatesync.yaml")]);
    expect(r.code).not.toBe(0);
    expect(r.stdout + r.stderr).toContain("TOO_MANY_DOCUMENTS");
    expect(r.stdout + r.stderr).toContain("limits.maxDocuments");
  });
});
