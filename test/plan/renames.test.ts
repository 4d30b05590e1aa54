/**
 * The planner on renames, deactivations and what comes back (issues 31 and 36): a rename keeps
 * its record instead of creating a second object; nothing the repository still declares is
 * deactivated; a deactivation is breaking; a run deactivating too much deactivates nothing; a
 * deactivated object declared again is switched on; an upsert in doubt is no create.
 */
import { afterAll, describe, expect, it } from "vitest";
import { hasBlocked, hasBreaking, hasChanges } from "../../src/plan/plan.js";
import type { Plan } from "../../src/plan/plan.js";
import { fieldChanges } from "../../src/plan/plan-change.js";
import type { PlannedChange } from "../../src/plan/plan-change.js";
import { renderPlan } from "../../src/plan/render/render.js";
import type { ResourceRecord, StateSnapshot } from "../../src/record/state.js";
import { desiredFrom, doc, emptyState, planFor, recordPlan } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { apiDefinition, orgKey } from "../helpers/resources.js";
import { heldPayload } from "../../src/record/wrappers/lazy-record.js";

afterAll(removeTempRepos);

const change = (plan: Plan, id: string): PlannedChange => {
  const c = plan.changes.find((x) => x.id === id);
  if (c === undefined) throw new Error(`no change for ${id}: ${plan.changes.map((x) => x.id).join(", ")}`);
  return c;
};

const api = (name: string, apiId = "petstore-v1", title = "Petstore"): string =>
  // listen path, upstream and title: what a complete deactivation extension is built from (api-deactivation.ts)
  apiDefinition({ name, apiId, listenPath: "/petstore/", definition: { title, server: "http://petstore.internal" } });
/** The OrgKey here: the resource `acme`, rate 10. */
const acme = { name: "acme", keyId: "org-acme", rate: 10 };
const product = (name: string, annotations = ""): string =>
  `apiVersion: gatesync.dev/v1\nkind: ApiProduct\nmetadata:\n  name: ${name}\n${annotations === "" ? "" : `  annotations:\n    ${annotations}\n`}spec:\n  Name: Shop\n  ProviderID: 1\n`;
const moved = (from: string): string => `gatesync.dev/moved-from: ${from}`;

/** Plans and records `before`, then plans `after` against it. */
async function applied(before: Record<string, string>): Promise<StateSnapshot> {
  const set = await desiredFrom(before);
  return recordPlan(planFor(set), set.desired, emptyState);
}
async function next(state: StateSnapshot, after: Record<string, string>, options: Parameters<typeof planFor>[2] = {}): Promise<Plan> {
  return planFor(await desiredFrom(after), state, options);
}

describe("renames", () => {
  it("follows an undeclared rename of an API (same apiId): moved, nothing sent, and under `orphans: deactivate` the live API is not switched off", async () => {
    const state = await applied({ "a.yaml": api("petstore") });
    const plan = await next(state, { "a.yaml": api("pets") }, { orphans: "deactivate" });
    expect(change(plan, "ApiDefinition/pets")).toMatchObject({ action: "moved", moved: { from: "ApiDefinition/petstore", declared: false } });
    expect(plan.changes.find((c) => c.id === "ApiDefinition/petstore")).toBeUndefined();
    expect(plan.summary).toMatchObject({ create: 0, update: 0, deactivate: 0, orphan: 0, moved: 1 });
    expect(plan.summary.calls.total).toBe(0);
    expect(hasChanges(plan)).toBe(true);
    expect(renderPlan(plan, "text")).toMatch(/~ ApiDefinition\/pets {2}moved {2}from ApiDefinition\/petstore/);
    // recorded: the record moved, history kept; the next plan is empty
    const after = recordPlan(plan, (await desiredFrom({ "a.yaml": api("pets") })).desired, state);
    expect([...after.resources.keys()]).toEqual(["ApiDefinition/pets"]);
    expect(after.resources.get("ApiDefinition/pets")!.createdAt).toBe(state.resources.get("ApiDefinition/petstore")!.createdAt);
    expect(hasChanges(await next(after, { "a.yaml": api("pets") }, { orphans: "deactivate" }))).toBe(false);
  });

  it("moves an org key renamed and changed: one update to the same key, its quota trigger not reset again", async () => {
    const state = await applied({ "k.yaml": orgKey({ ...acme, spec: 'quotaResetTrigger: "2026-10"' }) });
    const plan = await next(
      state,
      { "k.yaml": doc("OrgKey", "acme-main", 'keyId: org-acme\nrate: 20\nquotaResetTrigger: "2026-10"') },
      { orphans: "deactivate" },
    );
    const c = change(plan, "OrgKey/acme-main");
    expect(c).toMatchObject({ action: "update", moved: { from: "OrgKey/acme" }, operation: { path: "/gw/org/keys/org-acme", query: "" } });
    expect(c.quotaReset).toBeUndefined();
    expect(fieldChanges(c)).toEqual([{ path: "rate", op: "change", before: 10, after: 20 }]);
    expect(plan.summary.deactivate).toBe(0);
  });

  it("blocks an undeclared rename of a product (the portal names it: a likeness by Name, not a proof) and never plans a second one", async () => {
    const state = await applied({ "p.yaml": product("shop") });
    const plan = await next(state, { "p.yaml": product("storefront") });
    const c = change(plan, "ApiProduct/storefront");
    expect(c.action).toBe("blocked");
    expect(c.operation).toBeUndefined();
    expect(c.reason).toContain('ApiProduct/shop, gone from the repository, holds the product named "Shop"');
    expect(c.hint).toContain("gatesync.dev/moved-from: shop");
    expect(plan.summary.create).toBe(0);
    expect(hasBlocked(plan)).toBe(true);
  });

  it("blocks undeclared renames of a dashboard hook (no 409, no failed record) and of identical LLM settings", async () => {
    const hook = (name: string): string => doc("DashboardWebhook", name, "name: alerts\nmethod: POST\ntarget_path: https://chat.example.com/x");
    const llm = (name: string): string => doc("LlmSettings", name, "attributes: { model_name: m }");
    const state = await applied({ "w.yaml": hook("alerts"), "l.yaml": llm("assistant") });
    const plan = await next(state, { "w.yaml": hook("chat-alerts"), "l.yaml": llm("helper") });
    expect(change(plan, "DashboardWebhook/chat-alerts")).toMatchObject({
      action: "blocked",
      hint: expect.stringContaining("gatesync.dev/moved-from: alerts") as string,
    });
    expect(change(plan, "LlmSettings/helper")).toMatchObject({
      action: "blocked",
      hint: expect.stringContaining("gatesync.dev/moved-from: assistant") as string,
    });
    expect(plan.summary.calls.total).toBe(0);
    // a hook for another target is no likeness: created
    const other = await next(state, {
      "w.yaml": doc("DashboardWebhook", "chat-alerts", "name: alerts\nmethod: POST\ntarget_path: https://chat.example.com/y"),
      "l.yaml": llm("assistant"),
    });
    expect(change(other, "DashboardWebhook/chat-alerts").action).toBe("create");
  });

  it("moves a product whose rename is declared with gatesync.dev/moved-from: no call, its server id kept", async () => {
    const state = await applied({ "p.yaml": product("shop") });
    const files = { "p.yaml": product("storefront", moved("shop")) };
    const plan = await next(state, files);
    expect(change(plan, "ApiProduct/storefront")).toMatchObject({ action: "moved", moved: { from: "ApiProduct/shop", declared: true } });
    expect(plan.summary.calls.total).toBe(0);
    const after = recordPlan(plan, (await desiredFrom(files)).desired, state);
    expect(after.resources.get("ApiProduct/storefront")!.serverId).toBe("srv-shop");
    // the annotation left in place afterwards is harmless: it says the move is done
    const again = await next(after, files);
    expect(change(again, "ApiProduct/storefront")).toMatchObject({ action: "no-op" });
    expect(change(again, "ApiProduct/storefront").notes.join(" ")).toContain("the annotation can be removed");
  });

  it("accepts `Kind/name` in the annotation, refuses another kind, a resource still declared, and two claims on one record", async () => {
    const state = await applied({ "p.yaml": product("shop"), "a.yaml": api("petstore") });
    expect(
      change(await next(state, { "p.yaml": product("storefront", moved("ApiProduct/shop")), "a.yaml": api("petstore") }), "ApiProduct/storefront").action,
    ).toBe("moved");
    expect(
      change(await next(state, { "p.yaml": product("storefront", moved("OrgKey/shop")), "a.yaml": api("petstore") }), "ApiProduct/storefront"),
    ).toMatchObject({ action: "blocked", reason: expect.stringContaining("names another kind") as string });
    const stillThere = await next(state, { "p.yaml": product("shop"), "q.yaml": product("storefront", moved("shop")), "a.yaml": api("petstore") });
    expect(change(stillThere, "ApiProduct/storefront")).toMatchObject({ action: "blocked", reason: expect.stringContaining("still declares") as string });
    const twice = await next(state, { "p.yaml": product("one", moved("shop")), "q.yaml": product("two", moved("shop")), "a.yaml": api("petstore") });
    expect(change(twice, "ApiProduct/one").action).toBe("blocked");
    expect(change(twice, "ApiProduct/two").action).toBe("blocked");
  });

  it("never deactivates an orphaned record whose object the repository declares under another name (a record left behind)", async () => {
    const state = await applied({ "a.yaml": api("petstore") });
    const left: ResourceRecord = { ...state.resources.get("ApiDefinition/petstore")!, id: "ApiDefinition/old-petstore", name: "old-petstore" };
    const twice: StateSnapshot = { ...state, resources: new Map([...state.resources, [left.id, left]]) };
    const plan = await next(twice, { "a.yaml": api("petstore") }, { orphans: "deactivate" });
    const orphan = change(plan, "ApiDefinition/old-petstore");
    expect(orphan).toMatchObject({ action: "orphan" });
    expect(orphan.deactivate).toBeUndefined();
    expect(orphan.operation).toBeUndefined();
    expect(orphan.reason).toContain("declared as ApiDefinition/petstore");
    expect(orphan.hint).toContain("gatesync state resolve ApiDefinition/old-petstore --forget");
  });
});

describe("deactivation", () => {
  it("is breaking: removing an API's file under `orphans: deactivate` fails --fail-on-breaking like is_inactive would", async () => {
    const state = await applied({ "a.yaml": api("petstore"), "b.yaml": api("orders", "orders-v1", "Orders"), "k.yaml": orgKey(acme) });
    const plan = await next(state, { "a.yaml": api("petstore"), "k.yaml": orgKey(acme) }, { orphans: "deactivate" });
    const c = change(plan, "ApiDefinition/orders");
    expect(c).toMatchObject({ action: "orphan", deactivate: true, compatibility: { verdict: "breaking" } });
    expect(c.breaking).toEqual([{ path: "definition.x-gw-api-gateway.info.state.active", reason: expect.stringContaining("deactivated") as string }]);
    expect(plan.summary.breaking).toBe(1);
    expect(hasBreaking(plan)).toBe(true);
    expect(renderPlan(plan, "text")).toContain("⚠ breaking");
  });

  it("tells only kinds that can be switched off about `orphans: deactivate`", async () => {
    const state = await applied({ "p.yaml": product("shop"), "k.yaml": orgKey(acme) });
    const plan = await next(state, { "a.yaml": api("petstore") });
    expect(change(plan, "OrgKey/acme").hint).toContain("orphans: deactivate");
    expect(change(plan, "ApiProduct/shop").hint).not.toContain("orphans: deactivate");
    expect(change(plan, "ApiProduct/shop").reason).toContain("no interface can delete or deactivate an ApiProduct");
  });
});

describe("the guard against mass deactivation", () => {
  const three = { "a.yaml": api("petstore"), "b.yaml": api("orders", "orders-v1", "Orders"), "k.yaml": orgKey(acme) };
  const guard = { maxShare: 0.5, allow: false };

  it("withholds every deactivation of a run that would switch off everything (an emptied repository), saying how to allow it", async () => {
    const state = await applied(three);
    const plan = await next(state, { "p.yaml": product("shop") }, { orphans: "deactivate", deactivationGuard: guard });
    expect(plan.summary.deactivate).toBe(0);
    expect(plan.massDeactivation).toEqual({ withheld: 3, of: 3, maxShare: 0.5 });
    for (const id of ["ApiDefinition/petstore", "ApiDefinition/orders", "OrgKey/acme"]) {
      const c = change(plan, id);
      expect(c).toMatchObject({ action: "blocked", fields: [] });
      expect(c.operation).toBeUndefined();
      expect(c.hint).toContain("--allow-mass-deactivation");
    }
    expect(plan.summary.calls.total).toBe(1); // the product's create only
    expect(renderPlan(plan, "text")).toContain("Mass deactivation withheld");
    expect(renderPlan(plan, "markdown")).toContain("Mass deactivation withheld");
  });

  it("lets a share at or under maxShare through, stops one over it, and lifts for the flag or the allowed commit", async () => {
    const state = await applied(three);
    const one = await next(state, { "a.yaml": api("petstore"), "k.yaml": orgKey(acme) }, { orphans: "deactivate", deactivationGuard: guard });
    expect(one.summary.deactivate).toBe(1);
    const two = { "k.yaml": orgKey(acme) };
    expect((await next(state, two, { orphans: "deactivate", deactivationGuard: guard })).summary.deactivate).toBe(0);
    expect((await next(state, two, { orphans: "deactivate", deactivationGuard: { ...guard, maxShare: 0.7 } })).summary.deactivate).toBe(2);
    expect((await next(state, two, { orphans: "deactivate", deactivationGuard: { ...guard, allow: true } })).summary.deactivate).toBe(2);
    const commit = "0123456789abcdef0123456789abcdef01234567";
    expect((await next(state, two, { orphans: "deactivate", commit, deactivationGuard: { ...guard, allowCommit: "0123456" } })).summary.deactivate).toBe(2);
    expect((await next(state, two, { orphans: "deactivate", commit, deactivationGuard: { ...guard, allowCommit: "fedcba9" } })).summary.deactivate).toBe(0);
  });

  it("counts only what is still on: objects deactivated before are neither withheld nor in the share", async () => {
    const state = await applied(three);
    const off = recordPlan(await next(state, { "a.yaml": api("petstore"), "k.yaml": orgKey(acme) }, { orphans: "deactivate" }), [], state);
    expect(off.resources.get("ApiDefinition/orders")!.deactivatedAt).toBeDefined();
    // petstore of the two still on: a half, allowed
    expect((await next(off, { "k.yaml": orgKey(acme) }, { orphans: "deactivate", deactivationGuard: guard })).summary.deactivate).toBe(1);
  });
});

describe("reactivation", () => {
  it("switches a deactivated API back on when its file comes back byte for byte (a revert)", async () => {
    const files = { "a.yaml": api("petstore"), "k.yaml": orgKey(acme) };
    const state = await applied(files);
    const removed = await next(state, { "k.yaml": orgKey(acme) }, { orphans: "deactivate" });
    const off = recordPlan(removed, (await desiredFrom({ "k.yaml": orgKey(acme) })).desired, state);
    expect(off.resources.get("ApiDefinition/petstore")!.deactivatedAt).toBeDefined();
    const revert = await next(off, files, { orphans: "deactivate" });
    const c = change(revert, "ApiDefinition/petstore");
    expect(c).toMatchObject({ action: "update", reactivate: true, operation: { method: "PATCH", path: "/gw/apis/oas/petstore-v1" } });
    expect(fieldChanges(c)).toEqual([{ path: "definition.x-gw-api-gateway.info.state.active", op: "change", before: false, after: true }]);
    expect(c.breaking ?? []).toEqual([]);
    expect(revert.summary.reactivate).toBe(1);
    expect(renderPlan(revert, "text")).toContain("[reactivate]");
    // once applied, the record is on again and the plan is empty
    const on = recordPlan(revert, (await desiredFrom(files)).desired, off);
    expect(on.resources.get("ApiDefinition/petstore")!.deactivatedAt).toBeUndefined();
    expect(hasChanges(await next(on, files, { orphans: "deactivate" }))).toBe(false);
  });

  it("switches a deactivated key back on, unless its spec itself says is_inactive: true", async () => {
    const state = await applied({ "k.yaml": orgKey(acme), "a.yaml": api("petstore") });
    const off = recordPlan(await next(state, { "a.yaml": api("petstore") }, { orphans: "deactivate" }), [], state);
    expect(change(await next(off, { "k.yaml": orgKey(acme), "a.yaml": api("petstore") }), "OrgKey/acme")).toMatchObject({
      action: "update",
      reactivate: true,
      fields: [{ path: "is_inactive", before: true, after: false }],
    });
    const declaredOff = await next(off, { "k.yaml": orgKey({ ...acme, spec: "is_inactive: true" }), "a.yaml": api("petstore") });
    expect(change(declaredOff, "OrgKey/acme").reactivate).toBeUndefined();
  });

  it("switches a deactivated API back on when it comes back under a new name (a rename of a removed API)", async () => {
    const state = await applied({ "a.yaml": api("petstore"), "k.yaml": orgKey(acme) });
    const off = recordPlan(await next(state, { "k.yaml": orgKey(acme) }, { orphans: "deactivate" }), [], state);
    const plan = await next(off, { "a.yaml": api("pets"), "k.yaml": orgKey(acme) }, { orphans: "deactivate" });
    expect(change(plan, "ApiDefinition/pets")).toMatchObject({ action: "update", reactivate: true, moved: { from: "ApiDefinition/petstore" } });
  });
});

describe("an org key whose write is in doubt", () => {
  it("is written again as an update, its quota reset never again, and the plan never calls it a create", async () => {
    const state = await applied({ "k.yaml": orgKey({ ...acme, spec: 'quotaResetTrigger: "2026-10"' }) });
    const record = state.resources.get("OrgKey/acme")!;
    // what the recorder leaves when the write carrying reset_quota=1 for 2026-11 got no answer
    const inDoubt: ResourceRecord = { ...record, status: "in-doubt", trigger: "2026-11", error: "outcome unknown: socket hang up", attempted: record.applied! };
    const plan = await next(
      { ...state, resources: new Map([["OrgKey/acme", inDoubt]]) },
      { "k.yaml": orgKey({ ...acme, spec: 'quotaResetTrigger: "2026-11"' }) },
    );
    const c = change(plan, "OrgKey/acme");
    expect(c).toMatchObject({ action: "update", operation: { path: "/gw/org/keys/org-acme", query: "" } });
    expect(c.quotaReset).toBeUndefined();
    expect(c.hint).toBeUndefined();
    // what the plan says of the key (the summary line's "0 to create" aside)
    const text = renderPlan(plan, "text").split("Plan:")[0]!;
    expect(text).not.toMatch(/create/i);
    expect(text).not.toContain("--id");
    expect(text).toContain("not sent again");
    // a new trigger afterwards is a new reset
    const newer = await next(
      { ...state, resources: new Map([["OrgKey/acme", inDoubt]]) },
      { "k.yaml": orgKey({ ...acme, spec: 'quotaResetTrigger: "2026-12"' }) },
    );
    expect(change(newer, "OrgKey/acme")).toMatchObject({ quotaReset: true, operation: { query: "?reset_quota=1" } });
  });

  it("of a first write (nothing applied before) is written again without the reset too", async () => {
    const set = await desiredFrom({ "k.yaml": orgKey({ ...acme, spec: 'quotaResetTrigger: "2026-10"' }) });
    const inDoubt: ResourceRecord = {
      id: "OrgKey/acme",
      kind: "OrgKey",
      name: "acme",
      address: { keyID: "org-acme" },
      status: "in-doubt",
      trigger: "2026-10",
      attempted: heldPayload({}),
      createdAt: "t",
      updatedAt: "t",
    };
    const c = change(planFor(set, { ...emptyState, serial: 1, resources: new Map([["OrgKey/acme", inDoubt]]) }), "OrgKey/acme");
    expect(c).toMatchObject({ action: "update", operation: { query: "" } });
    expect(c.quotaReset).toBeUndefined();
  });
});
