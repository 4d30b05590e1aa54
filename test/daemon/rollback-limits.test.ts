/**
 * What a rollback says it cannot undo, resource by resource (issue 54): a webhook whose rename
 * the rollback undoes is nothing it cannot undo (the same webhook, updated back) — never "created
 * after"; a product coming back to its name keeps the values the portal cannot change, and says
 * which; a renamed object the revision declares under none of its names is named with them.
 */
import { afterAll, describe, expect, it } from "vitest";
import { appliedRecord } from "../../src/apply/records/applied-record.js";
import { cannotUndo } from "../../src/promotion/rollback-limits.js";
import type { StateSnapshot } from "../../src/record/state.js";
import { desiredFrom, doc, emptyState, planFor, recordPlan } from "../helpers/plan.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { product } from "../helpers/resources.js";

afterAll(removeTempRepos);

const revision = "4d1a9b27c0ffee00112233445566778899aabbcc";
const annotated = (text: string, from: string): string =>
  text.replace(/(metadata:\n {2}name: .+\n)/, `$1  annotations: { gatesync.dev/moved-from: ${from} }\n`);
const hook = (name: string, title: string): string =>
  doc("PortalWebhook", name, `Name: ${title}\nURL: https://h.example/x\nMethod: POST\nEvents: [UserRegistered]`);

async function applied(state: StateSnapshot, files: Record<string, string>): Promise<StateSnapshot> {
  const set = await desiredFrom(files);
  return recordPlan(planFor(set, state), set.desired, state);
}

describe("what a rollback cannot undo", () => {
  it("a rename undone is not listed; a product that cannot be updated says what it keeps; a renamed orphan is named with its earlier names", async () => {
    let state = await applied(emptyState, {
      "h.yaml": hook("orders", "Orders"),
      "p.yaml": product({ name: "shop", title: "Shop" }),
      "x.yaml": hook("extra", "Extra"),
    });
    state = await applied(state, {
      "h.yaml": annotated(hook("orders-events", "Order events"), "orders"),
      "p.yaml": annotated(product({ name: "storefront", title: "Shop" }), "shop"),
      "x.yaml": annotated(hook("extra-2", "Extra"), "extra"),
    });
    // the product renamed by hand in the portal, and the record told so (`state resolve --accept`)
    const renamed = (await desiredFrom({ "p.yaml": product({ name: "storefront", title: "Storefront" }) })).desired[0]!;
    const accepted = appliedRecord(renamed, state.resources.get("ApiProduct/storefront"), { now: "2026-11-22T00:00:00.000Z" });
    state = { ...state, resources: new Map([...state.resources, [accepted.id, accepted]]) };
    // the revision rolled back to declares the webhook and the product under their first names, not the extra hook
    const plan = planFor(await desiredFrom({ "h.yaml": hook("orders", "Orders"), "p.yaml": product({ name: "shop", title: "Shop" }) }), state);
    expect(cannotUndo(plan, state, revision)).toEqual([
      "ApiProduct/shop comes back as the object ApiProduct/storefront names, which cannot be updated: it keeps the values ApiProduct/storefront gave it (Name); its record moves back and no second one is created",
      "PortalWebhook/extra-2 (before: PortalWebhook/extra) is declared at 4d1a9b27c0ff under none of its names: the rollback does not delete it (it stays, reported as an orphan)",
    ]);
  });
});
