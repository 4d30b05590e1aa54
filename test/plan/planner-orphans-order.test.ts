/** The planner on orphans (reported, deactivated once, or refused), and on order: waves, cycles, call counts, the state it read, its digest. */
import { createHash } from "node:crypto";
import { afterAll, describe, expect, it } from "vitest";
import { PlanError } from "../../src/errors.js";
import { planWaves } from "../../src/plan/graph.js";
import { computePlan, hasChanges } from "../../src/plan/plan.js";
import { fieldChanges } from "../../src/plan/plan-change.js";
import type { PlannedChange } from "../../src/plan/plan-change.js";
import { canonical } from "../../src/kinds/canonical.js";
import { sensitiveKey } from "../../src/secrets/markers.js";
import { desiredFrom, doc, emptyState, petstore, planFor, recordPlan, stateOf } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { orgKey, product } from "../helpers/resources.js";

afterAll(removeTempRepos);

const change = (plan: { changes: readonly PlannedChange[] }, id: string): PlannedChange => {
  const c = plan.changes.find((x) => x.id === id);
  if (c === undefined) throw new Error(`no change for ${id}`);
  return c;
};

/** The OrgKey and the ApiProduct most tests here plan. */
const acme = { name: "acme", keyId: "org-acme" };
const shop = { name: "shop", title: "Shop" };

describe("orphans", () => {
  const recorded = async (files: Record<string, string>): Promise<ReturnType<typeof recordPlan>> => {
    const set = await desiredFrom(files);
    return recordPlan(planFor(set), set.desired, emptyState);
  };

  it("reports resources that left the repository and never forgets them", async () => {
    const state = await recorded({ "a.yaml": petstore, "k.yaml": orgKey({ ...acme, spec: "rate: 1" }), "p.yaml": product(shop) });
    const plan = planFor(await desiredFrom({ "k.yaml": orgKey({ ...acme, spec: "rate: 1" }) }), state);
    expect(plan.changes.filter((c) => c.action === "orphan").map((c) => [c.id, c.operation])).toEqual([
      ["ApiDefinition/petstore", undefined],
      ["ApiProduct/shop", undefined],
    ]);
    expect(change(plan, "ApiProduct/shop").reason).toMatch(/stays on the server.*--forget/);
    expect(hasChanges(plan)).toBe(false);
  });

  it("deactivates API definitions and org keys under `orphans: deactivate`, once", async () => {
    const state = await recorded({ "a.yaml": petstore, "k.yaml": orgKey({ ...acme, spec: "rate: 1" }), "p.yaml": product(shop) });
    const set = await desiredFrom({ "x.yaml": doc("LlmSettings", "x", "attributes: {}") });
    const plan = planFor(set, state, { orphans: "deactivate" });
    expect(change(plan, "ApiDefinition/petstore")).toMatchObject({
      action: "orphan",
      deactivate: true,
      operation: { method: "PATCH", path: "/gw/apis/oas/petstore-v1" },
    });
    expect(change(plan, "OrgKey/acme")).toMatchObject({ action: "orphan", deactivate: true, fields: [{ path: "is_inactive", before: false, after: true }] });
    expect(change(plan, "ApiProduct/shop").operation).toBeUndefined();
    const after = recordPlan(plan, set.desired, state);
    const again = planFor(set, after, { orphans: "deactivate" });
    expect(change(again, "OrgKey/acme")).toMatchObject({ action: "orphan" });
    expect(change(again, "OrgKey/acme").operation).toBeUndefined();
    expect(change(again, "OrgKey/acme").reason).toMatch(/deactivated on/);
  });

  it("does not deactivate when it would have to send values the state does not keep", async () => {
    const state = await recorded({
      "k.yaml": orgKey({ ...acme, spec: "hmac_string: s3cret-value" }),
      "a.yaml": petstore.replace(/ {2}x-gw-api-gateway:\n.*\n/, ""),
    });
    const plan = planFor(await desiredFrom({ "x.yaml": doc("LlmSettings", "x", "attributes: {}") }), state, { orphans: "deactivate" });
    expect(change(plan, "OrgKey/acme").operation).toBeUndefined();
    expect(change(plan, "OrgKey/acme").reason).toMatch(/sensitive values/);
  });

  it("deactivates an API whose document has no gateway extension, with a complete one built from the document and its flags", async () => {
    const state = await recorded({
      "a.yaml": petstore
        .replace(/ {2}x-gw-api-gateway:\n.*\n/, "")
        .replace("    paths: {}", '    servers: [{ url: "http://petstore.internal" }]\n    paths: {}'),
    });
    const plan = planFor(await desiredFrom({ "x.yaml": doc("LlmSettings", "x", "attributes: {}") }), state, { orphans: "deactivate" });
    expect(change(plan, "ApiDefinition/petstore")).toMatchObject({
      action: "orphan",
      deactivate: true,
      operation: { method: "PATCH", path: "/gw/apis/oas/petstore-v1" },
    });
    expect(change(plan, "ApiDefinition/petstore").notes[0]).toMatch(/no x-gw-api-gateway extension: a complete x-gw-api-gateway extension is sent/);
  });
});

describe("order, dependencies and calls", () => {
  it("puts resources after the APIs they reference, in waves", async () => {
    const plan = planFor(
      await desiredFrom({
        "a.yaml": petstore,
        "k.yaml": orgKey({ ...acme, spec: "access_rights:\n  p: { apiRef: petstore }" }),
        "p.yaml": product({ ...shop, spec: "APIDetails: [{ apiRef: petstore }]" }),
        "l.yaml": doc("LlmSettings", "l", "attributes: {}"),
      }),
    );
    expect(plan.changes.map((c) => [c.wave, c.id])).toEqual([
      [1, "ApiDefinition/petstore"],
      [1, "LlmSettings/l"],
      [2, "OrgKey/acme"],
      [2, "ApiProduct/shop"],
    ]);
    expect(fieldChanges(change(plan, "OrgKey/acme"))[0]).toMatchObject({ path: "access_rights", after: { p: { api_id: "petstore-v1" } } });
  });

  it("names cycles", () => {
    expect(
      planWaves([
        { id: "a", dependsOn: ["b"] },
        { id: "b", dependsOn: ["c"] },
        { id: "c", dependsOn: ["a"] },
        { id: "d", dependsOn: [] },
      ]),
    ).toEqual({ ok: false, cycle: ["a", "b", "c", "a"] });
    expect(planWaves([{ id: "a", dependsOn: ["a"] }])).toEqual({ ok: false, cycle: ["a", "a"] });
    const desired = [
      {
        id: "X/a",
        kind: "OrgKey" as const,
        name: "a",
        hash: "ha",
        request: { address: {}, create: "upsertOrgKey" as const, update: "upsertOrgKey" as const, query: {}, readCompare: () => ({}) },
        dependsOn: ["X/b"],
        source: { file: "f", line: 1 },
      },
      {
        id: "X/b",
        kind: "OrgKey" as const,
        name: "b",
        hash: "hb",
        request: { address: {}, create: "upsertOrgKey" as const, update: "upsertOrgKey" as const, query: {}, readCompare: () => ({}) },
        dependsOn: ["X/a"],
        source: { file: "f", line: 1 },
      },
    ];
    expect(() => computePlan(desired, emptyState, { orphans: "report", now: "t" })).toThrow(PlanError);
    expect(() => computePlan(desired, emptyState, { orphans: "report", now: "t" })).toThrow(/X\/a → X\/b → X\/a/);
  });

  it("counts the HTTP calls, grouping gateway changes of a wave into batches", async () => {
    const files: Record<string, string> = {};
    for (let i = 0; i < 120; i++) files[`k${i}.yaml`] = orgKey({ name: `k${i}`, keyId: `org-k${i}`, spec: "rate: 1" });
    files["p.yaml"] = product(shop);
    const set = await desiredFrom(files);
    expect(planFor(set).summary.calls).toEqual({ gateway: 120, portal: 1, dashboard: 0, llm: 0, batchCalls: 0, batched: 0, total: 121 });
    const batched = planFor(set, emptyState, { batch: { maxSize: 50 } });
    expect(batched.summary.calls).toEqual({ gateway: 0, portal: 1, dashboard: 0, llm: 0, batchCalls: 3, batched: 120, total: 4 });
    expect(batched.changes.filter((c) => c.operation?.batchable === true)).toHaveLength(120);
    expect(change(batched, "ApiProduct/shop").operation?.batchable).toBe(false);
  });

  it("records the state it was computed from", async () => {
    const plan = planFor(await desiredFrom({ "k.yaml": orgKey({ ...acme, spec: "rate: 1" }) }), stateOf([], 7));
    expect(plan.state).toEqual({ lineage: "lineage-1", serial: 7 });
    expect(plan.digest.read()).toMatch(/^[0-9a-f]{64}$/);
  });

  it("digests the canonical form of the changes, secrets hidden, the same under another hash key", async () => {
    const files = { "k.yaml": orgKey({ ...acme, spec: "rate: 1\nhmac_string: s3cret" }), "p.yaml": product(shop), "a.yaml": petstore };
    const plan = planFor(await desiredFrom(files));
    const hidden = JSON.parse(
      JSON.stringify(plan.changes, (_k, v: unknown) => (v !== null && typeof v === "object" && sensitiveKey in v ? "(sensitive)" : v)),
    ) as unknown;
    // each change in the canonical (Merkle) form content hashes use, the list hashed as it is written
    expect(plan.digest.read()).toBe(
      createHash("sha256")
        .update(`[${(hidden as unknown[]).map((c) => canonical(c)).join(",")}]`)
        .digest("hex"),
    );
    expect(planFor(await desiredFrom(files, { hashKey: "another-key" })).digest.read()).toBe(plan.digest.read());
    expect(planFor(await desiredFrom({ ...files, "k.yaml": orgKey({ ...acme, spec: "rate: 2\nhmac_string: s3cret" }) })).digest.read()).not.toBe(
      plan.digest.read(),
    );
    // taken when read: the JSON of a plan carries it as the string
    expect((JSON.parse(JSON.stringify(plan)) as { digest: unknown }).digest).toBe(plan.digest.read());
  });
});
