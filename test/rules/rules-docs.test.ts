/**
 * docs/user/rules.md's example rulesets do what the page says, on the example repository: each of
 * the three rules per target loads and finds what it is about, at the member it names.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { runCli } from "../helpers/cli.js";
import { positionOf, projectRoot, removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
afterEach(async () => {
  await h?.stop();
  h = undefined;
});

/** The YAML block after `<!-- ruleset: NAME -->` in docs/user/rules.md. */
async function docRuleset(name: string): Promise<string> {
  const page = await readFile(path.join(projectRoot, "docs/user/rules.md"), "utf8");
  const block = new RegExp(`<!-- ruleset: ${name} -->\\n\`\`\`yaml\\n([\\s\\S]*?)\`\`\``).exec(page)?.[1];
  if (block === undefined) throw new Error(`docs/user/rules.md has no ${name} ruleset`);
  return block;
}

interface Finding {
  severity: string;
  rule?: string;
  file?: string;
  line?: number;
  column?: number;
  resource?: string;
  path?: string;
  message: string;
}

describe("docs/user/rules.md", { timeout: 120_000 }, () => {
  it("its rulesets find what they describe in the examples", async () => {
    h = await harness({ configExtra: "rules: { openapi: rules/openapi.yaml, resources: rules/resources.yaml }\n" });
    await mkdir(path.join(h.dir, "rules"));
    await writeFile(path.join(h.dir, "rules/openapi.yaml"), await docRuleset("openapi"));
    await writeFile(path.join(h.dir, "rules/resources.yaml"), await docRuleset("resources"));
    // one operation without its summary
    const definitionFile = path.join(h.dir, "config/openapi/petstore.yaml");
    const definition = (await readFile(definitionFile, "utf8")).replace("      summary: List all pets\n", "");
    await writeFile(definitionFile, definition);
    const r = await runCli(["validate", "--config", path.join(h.dir, "gatesync.yaml"), "--format", "json"], h.env);
    expect(r.stderr).toBe("");
    const found = (JSON.parse(r.stdout) as { valid: boolean; diagnostics: Finding[] }).diagnostics.filter((d) => d.rule !== undefined);
    const read = async (f: string): Promise<string> => readFile(path.join(h!.dir, "config", f), "utf8");

    // openapi: the petstore document names no contact and requires no authentication; the orders one does
    expect(found).toContainEqual(
      expect.objectContaining({ severity: "error", rule: "api-contact", file: "openapi/petstore.yaml", resource: "ApiDefinition/petstore", path: "info" }),
    );
    expect(found).toContainEqual(
      expect.objectContaining({ severity: "error", rule: "api-authentication", file: "openapi/petstore.yaml", resource: "ApiDefinition/petstore" }),
    );
    expect(found.filter((d) => d.rule === "api-authentication" && d.resource === "ApiDefinition/orders")).toEqual([]);
    expect(found.filter((d) => d.rule === "operation-summary")).toEqual([
      expect.objectContaining({
        severity: "warning",
        file: "openapi/petstore.yaml",
        path: 'paths["/pets"].get',
        line: positionOf(definition, "get:").line + 1,
      }),
    ]);

    // resources: listen paths, rates (the key's own and an API's), webhooks
    const petstore = await read("apis/petstore.yaml");
    expect(found).toContainEqual(
      expect.objectContaining({
        severity: "error",
        rule: "listen-path-prefix",
        file: "apis/petstore.yaml",
        ...positionOf(petstore, "/petstore/"),
        message: "listen path /petstore/ does not start with /shop/",
      }),
    );
    const keys = await read("gateway/org-keys.yaml");
    const rate = positionOf(keys, "rate: 1000");
    expect(found).toContainEqual(
      expect.objectContaining({
        rule: "org-key-rate",
        file: "gateway/org-keys.yaml",
        line: rate.line,
        column: rate.column + "rate: ".length,
        message: "rate 1000 is above the agreed 500",
      }),
    );
    expect(found.filter((d) => d.rule === "org-key-rate" && d.message.startsWith("rate 100 "))).toEqual([]);
    // every example webhook calls an example.com host: none is reported
    expect(found.filter((d) => d.rule === "webhook-inside-company")).toEqual([]);
  });

  it("its webhook rule reports an address outside the company", async () => {
    h = await harness({ configExtra: "rules: { resources: rules/resources.yaml }\n" });
    await mkdir(path.join(h.dir, "rules"));
    await writeFile(path.join(h.dir, "rules/resources.yaml"), await docRuleset("resources"));
    const file = path.join(h.dir, "config/dashboard/webhooks.yaml");
    const text = (await readFile(file, "utf8")).replace("https://billing.example.com/gateway/quota", "https://hooks.example.net.evil.io/quota");
    await writeFile(file, text);
    const r = await runCli(["validate", "--config", path.join(h.dir, "gatesync.yaml")], h.env);
    expect(r.code).toBe(1);
    const at = positionOf(text, "https://hooks.example.net.evil.io/quota");
    expect(r.stdout).toContain(`error[RULESET_VIOLATION webhook-inside-company] dashboard/webhooks.yaml:${at.line}:${at.column}`);
    expect(r.stdout).toContain("https://hooks.example.net.evil.io/quota is not an address of the company (https://*.example.com)");
  });
});
