/**
 * The planner on names that come back (issue 54, docs/user/renames.md "What comes back"): a
 * rename is kept in the record's lineage, and an earlier name declared again — a rollback, a
 * revert, an old commit — moves the record back and updates the same object; a kind that cannot
 * be updated says what stays; a name also declared under its newer name is never created
 * without the operator's word.
 */
import { afterAll, describe, expect, it } from "vitest";
import { appliedRecord } from "../../src/apply/records/applied-record.js";
import type { Plan } from "../../src/plan/plan.js";
import { fieldChanges } from "../../src/plan/plan-change.js";
import type { PlannedChange } from "../../src/plan/plan-change.js";
import { renderPlan } from "../../src/plan/render/render.js";
import type { StateSnapshot } from "../../src/record/state.js";
import { desiredFrom, doc, emptyState, planFor, recordPlan } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { product as apiProduct } from "../helpers/resources.js";

afterAll(removeTempRepos);

const change = (plan: Plan, id: string): PlannedChange => {
  const c = plan.changes.find((x) => x.id === id);
  if (c === undefined) throw new Error(`no change for ${id}: ${plan.changes.map((x) => x.id).join(", ")}`);
  return c;
};
const annotated = (text: string, name: string, from: string): string =>
  text.replace(`  name: ${name}\n`, `  name: ${name}\n  annotations: { gatesync.dev/moved-from: ${from} }\n`);
const hook = (name: string, title: string, url: string, from?: string): Record<string, string> => {
  const text = doc("PortalWebhook", name, `Name: ${title}\nURL: ${url}\nMethod: POST\nEvents: [UserRegistered]`);
  return { "hook.yaml": from === undefined ? text : annotated(text, name, from) };
};
const product = (name: string, title: string, from?: string): Record<string, string> => {
  const text = apiProduct({ name, title });
  return { "p.yaml": from === undefined ? text : annotated(text, name, from) };
};

/** Plans `files` against `state` and records the plan as applied. */
async function apply(state: StateSnapshot, files: Record<string, string>): Promise<{ plan: Plan; state: StateSnapshot }> {
  const set = await desiredFrom(files);
  const plan = planFor(set, state);
  return { plan, state: recordPlan(plan, set.desired, state) };
}

const v1 = hook("orders", "Orders", "https://hooks.example/v1");
const v2 = hook("orders-events", "Order events", "https://hooks.example/v2", "orders");

describe("a name that comes back", () => {
  it("moves the record back and updates the same webhook with the earlier values (a rollback or revert to v1)", async () => {
    const one = await apply(emptyState, v1);
    const two = await apply(one.state, v2);
    expect(change(two.plan, "PortalWebhook/orders-events")).toMatchObject({ action: "update", moved: { from: "PortalWebhook/orders" } });
    expect(two.state.resources.get("PortalWebhook/orders-events")!.renames).toEqual([
      { from: "PortalWebhook/orders", to: "PortalWebhook/orders-events", at: expect.any(String) as string },
    ]);
    const back = await apply(two.state, v1);
    const c = change(back.plan, "PortalWebhook/orders");
    expect(c).toMatchObject({
      action: "update",
      moved: { from: "PortalWebhook/orders-events", declared: false, returned: true },
      operation: { method: "PUT", path: "/webhooks/srv-orders" },
    });
    // the URL is sensitive (a token in its query): compared by its keyed hash
    expect(fieldChanges(c).map((f) => [f.path, f.path === "URL" ? "(sensitive)" : f.after])).toEqual([
      ["Name", "Orders"],
      ["URL", "(sensitive)"],
    ]);
    expect(c.notes[0]).toContain("PortalWebhook/orders comes back: it was renamed PortalWebhook/orders-events on ");
    expect(back.plan.summary).toMatchObject({ create: 0, orphan: 0, moved: 1, update: 1 });
    expect(renderPlan(back.plan, "text")).toContain(
      "~ PortalWebhook/orders  update  from PortalWebhook/orders-events (back to an earlier name: same object)  PUT /webhooks/srv-orders",
    );
    // one record, the same server object; v2 again (its annotation, or without it) moves it forward
    expect([...back.state.resources.keys()]).toEqual(["PortalWebhook/orders"]);
    expect(back.state.resources.get("PortalWebhook/orders")!.serverId).toBe("srv-orders");
    for (const files of [v2, hook("orders-events", "Order events", "https://hooks.example/v2")]) {
      const again = await apply(back.state, files);
      expect(change(again.plan, "PortalWebhook/orders-events")).toMatchObject({ action: "update", moved: { from: "PortalWebhook/orders" } });
      expect(again.plan.summary.create).toBe(0);
    }
  });

  it("a kind that cannot be updated: blocked, saying the object stays as it is; the record moves back, nothing is created", async () => {
    const one = await apply(emptyState, product("shop", "Shop"));
    const two = await apply(one.state, product("storefront", "Shop", "shop"));
    expect(change(two.plan, "ApiProduct/storefront").action).toBe("moved");
    // the product was renamed in the portal by hand, and the record told so (`state resolve --accept`)
    const renamed = (await desiredFrom(product("storefront", "Storefront"))).desired[0]!;
    const accepted = appliedRecord(renamed, two.state.resources.get("ApiProduct/storefront"), { now: "2026-11-22T00:00:00.000Z" });
    const state: StateSnapshot = { ...two.state, resources: new Map([[accepted.id, accepted]]) };
    const back = await apply(state, product("shop", "Shop"));
    const c = change(back.plan, "ApiProduct/shop");
    expect(c).toMatchObject({ action: "blocked", moved: { from: "ApiProduct/storefront", returned: true } });
    expect(c.reason).toBe(
      "the portal interface offers no update for API products; the object was created before: the object stays as ApiProduct/storefront left it (the values below are not sent) and no second one is created; its record moves back to this name",
    );
    expect(fieldChanges(c)).toEqual([{ path: "Name", op: "change", before: "Storefront", after: "Shop" }]);
    expect(back.plan.summary).toMatchObject({ create: 0, orphan: 0, moved: 1, blocked: 1 });
    expect([...back.state.resources.keys()]).toEqual(["ApiProduct/shop"]);
    expect(back.state.resources.get("ApiProduct/shop")!.serverId).toBe("srv-shop");
    // still no create on the next plan: the kind's usual block, whose `--accept` finds the record under its name
    const next = planFor(await desiredFrom(product("shop", "Shop")), back.state);
    expect(change(next, "ApiProduct/shop")).toMatchObject({
      action: "blocked",
      hint: expect.stringContaining("state resolve ApiProduct/shop --accept") as string,
    });
  });

  it("an earlier name declared beside its newer one is blocked with the explicit way to a second object; another address is another object", async () => {
    const one = await apply(emptyState, v1);
    const two = await apply(one.state, v2);
    const both = await apply(two.state, { ...v2, "again.yaml": hook("orders", "Orders", "https://hooks.example/v1")["hook.yaml"]! });
    const c = change(both.plan, "PortalWebhook/orders");
    expect(c.action).toBe("blocked");
    expect(c.reason).toContain("PortalWebhook/orders is an earlier name of PortalWebhook/orders-events (renamed on ");
    expect(c.hint).toContain("`gatesync state resolve PortalWebhook/orders --forget` forgets it as PortalWebhook/orders-events's earlier name");
    expect(both.plan.summary.create).toBe(0);
    // a webhook whose spec names another portal id is not the renamed one: planned as it is
    const other = planFor(
      await desiredFrom({
        "hook.yaml": doc("PortalWebhook", "orders", "webhookId: wh-77\nName: Orders\nURL: https://h/x\nMethod: POST\nEvents: [UserRegistered]"),
      }),
      two.state,
    );
    expect(change(other, "PortalWebhook/orders").moved).toBeUndefined();
    expect(change(other, "PortalWebhook/orders-events").action).toBe("orphan");
  });
});
