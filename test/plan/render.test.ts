import { afterAll, describe, expect, it } from "vitest";
import { renderPlan, renderMarkdown, markdownLimit } from "../../src/plan/render.js";
import { SchemaRegistry } from "../../src/validate/schema-registry.js";
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
    expect(md).toContain("| ✏️ | `ApiDefinition/petstore` | update | `PATCH /gw/apis/oas/petstore-v1?listenPath=%2Fpetstore%2F [batch]` |");
    expect(md.match(/<details>/g)).toHaveLength(3);
    // a value with ``` inside is fenced by a longer fence
    expect(md).toContain("````diff");
    expect(md).toContain('~ Content: "<p>a | b</p>" → "<p>changed</p>"');
    expect(md).toContain("commit `0123456789ab`");
  });

  it("stays under 65,000 characters on a large plan and says what it cut", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 1500; i++) files[`k${i}.yaml`] = doc("OrgKey", `key-${i}`, `keyId: key-${i}\nrate: ${i}\nmeta_data: { note: "${"x".repeat(60)}" }\ntags: [a, b, c]`);
    const plan = planFor(await desiredFrom(files));
    const md = renderMarkdown(plan);
    expect(md.length).toBeLessThanOrEqual(markdownLimit);
    expect(md).toMatch(/\*\*\d+ of 1500 changed resources are not detailed here\*\*: the comment would pass 65,000 characters/);
    expect(md).toMatch(/and \d+ more rows not shown/);
  });

  it("says plainly when nothing changes", async () => {
    const set = await desiredFrom({ "a.yaml": petstore });
    const plan = planFor(set, recordPlan(planFor(set), set.desired, emptyState));
    expect(renderPlan(plan, "text")).toContain("No changes");
    expect(renderPlan(plan, "markdown")).toContain("No changes");
  });
});
