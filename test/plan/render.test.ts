import { afterAll, describe, expect, it } from "vitest";
import { renderPlan, renderMarkdown, markdownLimit } from "../../src/plan/render/render.js";
import { fences, listItems, renderHtml, tableCells } from "../helpers/markdown.js";
import { SchemaRegistry } from "../../src/validate/schema/schema-registry.js";
import { desiredFrom, doc, emptyState, petstore, planFor, recordPlan } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
const schemas = new SchemaRegistry();

async function samplePlan(): Promise<ReturnType<typeof planFor>> {
  const before = await desiredFrom({ "a.yaml": petstore, "p.yaml": doc("ApiProduct", "shop", "Name: Shop\nProviderID: 1\nContent: '<p>a | b</p>'") });
  const state = recordPlan(planFor(before), before.desired, emptyState);
  const after = await desiredFrom(
    {
      "a.yaml": petstore.replace("title: Petstore", "title: '```Pet``` store'"),
      "p.yaml": doc("ApiProduct", "shop", "Name: Shop\nProviderID: 1\nContent: '<p>changed</p>'"),
      "k.yaml": doc("OrgKey", "acme", "keyId: k\nhmac_string: ${env:H}\nquotaResetTrigger: '1'"),
    },
    { env: { H: "hmac-secret-value" } },
  );
  return planFor(after, state, { batch: { maxSize: 50 }, commit: "0123456789abcdef0123" });
}

describe("renderers", () => {
  it("writes JSON that matches the published plan schema, with sensitive values as {sensitive: true}", async () => {
    const json = JSON.parse(renderPlan(await samplePlan(), "json")) as Record<string, unknown>;
    expect(schemas.validate("plan.schema.json", json)).toEqual([]);
    expect(JSON.stringify(json)).toContain('"after":{"sensitive":true}');
    expect(JSON.stringify(json)).not.toContain("hmac-secret-value");
    expect(schemas.validate("plan.schema.json", { ...json, changes: [{ id: "x" }] }).length).toBeGreaterThan(0);
  });

  it("writes text for terminals, with colour only when asked", async () => {
    const plan = await samplePlan();
    const plain = renderPlan(plan, "text");
    expect(plain.includes("\u001b[")).toBe(false);
    expect(plain).toContain("~ ApiDefinition/petstore  update  PATCH /gw/apis/oas/petstore-v1?listenPath=%2Fpetstore%2F [batch]");
    expect(plain).toContain('~ definition.info.title: "Petstore" → "```Pet``` store"');
    expect(plain).toContain("+ OrgKey/acme  create  POST /gw/org/keys/k?reset_quota=1 [batch, quota reset]");
    expect(plain).toContain("+ hmac_string: (sensitive)");
    expect(plain).toContain("! ApiProduct/shop  blocked");
    expect(plain).toContain("Plan: 1 to create, 1 to update, 1 blocked, 0 orphaned, 0 unchanged, 1 quota reset.");
    expect(plain).toContain("1 HTTP call (gateway 0, portal 0, dashboard 0, llm 0, 1 batch call carrying 2 gateway changes).");
    expect(renderPlan(plan, "text", { color: true }).includes("\u001b[")).toBe(true);
  });

  it("writes markdown with a summary table and one collapsible section per changed resource, fences safe from backticks", async () => {
    const md = renderPlan(await samplePlan(), "markdown");
    // as GitHub renders it (CommonMark + GFM tables): the cells read as plain text
    expect(tableCells(md)).toEqual([
      ["", "resource", "action", "call"],
      ["✏️", "ApiDefinition/petstore", "update", "PATCH /gw/apis/oas/petstore-v1?listenPath=%2Fpetstore%2F [batch]"],
      ["➕", "OrgKey/acme", "create", "POST /gw/org/keys/k?reset_quota=1 [batch, quota reset]"],
      ["⛔", "ApiProduct/shop", "blocked", "the portal interface offers no update for API products; the object was created before"],
    ]);
    expect(md.match(/<details>/g)).toHaveLength(3);
    // a value with ``` inside is fenced by a longer fence, and each block parses back whole
    const blocks = fences(md);
    expect(blocks.map((b) => b.info)).toEqual(["diff", "diff", "diff"]);
    expect(blocks[0]?.content).toContain('+ definition.info.title: "```Pet``` store"');
    // an update is a - line and a + line, which GitHub colours
    expect(blocks[2]?.content).toContain('- Content: "<p>a | b</p>"\n+ Content: "<p>changed</p>"\n');
    expect(md).toContain("commit `0123456789ab`");
    expect(renderHtml(md)).toContain("<summary>✏️ <code>ApiDefinition/petstore</code> — update (1 field)</summary>");
  });

  it("keeps every cell literal whatever the values hold: ampersands, pipes, backticks, angle brackets, emphasis", async () => {
    // (no space: an API id is one URL path segment)
    const nasty = "a&b|`c```d``<e>*f*_g_[h](i)&amp;";
    const set = await desiredFrom({
      "w.yaml": doc(
        "ApiDefinition",
        "w",
        `apiId: "${nasty.replace(/"/g, '\\"')}"\nquery: { listenPath: "/x/?a=1&b=2" }\ndefinition:\n  openapi: 3.0.3\n  info: { title: T, version: "1" }\n  paths: {}`,
      ),
    });
    const md = renderMarkdown(planFor(set));
    const row = tableCells(md)[1] ?? [];
    expect(row[2]).toBe("update");
    expect(row[3]).toBe(`PATCH /gw/apis/oas/${encodeURIComponent(nasty)}?listenPath=%2Fx%2F%3Fa%3D1%26b%3D2`);
    expect(md).not.toContain("&amp;");
  });

  it("stays under 65,000 characters on a large plan and says what it cut", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 1500; i++)
      files[`k${i}.yaml`] = doc("OrgKey", `key-${i}`, `keyId: key-${i}\nrate: ${i}\nmeta_data: { note: "${"x".repeat(60)}" }\ntags: [a, b, c]`);
    const plan = planFor(await desiredFrom(files));
    const md = renderMarkdown(plan);
    expect(md.length).toBeLessThanOrEqual(markdownLimit);
    expect(md).toMatch(/\*\*\d+ of 1500 changed resources are not detailed here\*\*: the comment would pass 65,000 characters/);
    expect(md).toMatch(/and \d+ more rows not shown/);
  });

  it("marks a breaking update on its row and lists its breaking changes first, as list items GitHub renders", async () => {
    const withOp = petstore.replace(
      "paths: {}",
      "paths: { /pets: { get: { responses: { '200': { description: ok } } }, post: { responses: { '201': { description: ok } } } } }",
    );
    const before = await desiredFrom({ "a.yaml": withOp });
    const state = recordPlan(planFor(before), before.desired, emptyState);
    const after = await desiredFrom({
      "a.yaml": withOp.replace(", post: { responses: { '201': { description: ok } } }", "").replace("listenPath: /petstore/", "listenPath: /pets/"),
    });
    const plan = planFor(after, state);
    const md = renderMarkdown(plan);
    expect(tableCells(md)[1]).toEqual(["✏️", "ApiDefinition/petstore", "update ⚠ breaking", "PATCH /gw/apis/oas/petstore-v1?listenPath=%2Fpets%2F"]);
    expect(listItems(md)).toEqual([
      "query.listenPath — the listen path changed from /petstore/ to /pets/: callers of the old path get 404",
      'definition.paths["/pets"].post — [Removed] operation POST /pets',
    ]);
    expect(md).toContain("<details open><summary>✏️ <code>ApiDefinition/petstore</code> — update <b>⚠ breaking</b> (2 fields)</summary>");
    expect(plan.summary.breaking).toBe(1);
    const text = renderPlan(plan, "text");
    expect(text).toContain("~ ApiDefinition/petstore  update  PATCH /gw/apis/oas/petstore-v1?listenPath=%2Fpets%2F  ⚠ breaking");
    expect(text).toContain("Plan: 0 to create, 1 to update (1 ⚠ breaking), 0 blocked, 0 orphaned, 0 unchanged.");
  });

  it("says plainly when nothing changes", async () => {
    const set = await desiredFrom({ "a.yaml": petstore });
    const plan = planFor(set, recordPlan(planFor(set), set.desired, emptyState));
    expect(renderPlan(plan, "text")).toContain("No changes");
    expect(renderPlan(plan, "markdown")).toContain("No changes");
  });
});
