/**
 * The planner's ownership check (plan/ownership-check.ts, docs/user/teams.md), pure: the
 * registry's rows come in as data. A write of another owner's object is refused for that
 * resource alone, named; the same owner's other environment is another claimant; a reference to
 * another owner's API is said to be one; a row of another target changes nothing.
 */
import { describe, expect, it } from "vitest";
import type { OwnershipRow } from "../../src/record/ownership/ownership.js";
import { keyOf } from "../../src/record/ownership/ownership.js";
import type { OwnershipView } from "../../src/plan/ownership-check.js";
import { checkedKeys, referencedApiKeys } from "../../src/plan/ownership-check.js";
import { emptySnapshot } from "../../src/record/state.js";
import { desiredFrom, doc, planFor } from "../helpers/plan.js";
import { orgKey, product } from "../helpers/resources.js";

const url = "https://gw.example";
const row = (object: string, owner: string, environment = `${owner}-prod`, at = url, resource = "OrgKey/x"): OwnershipRow => ({
  interface: "gateway",
  url: at,
  object,
  owner,
  environment,
  resource,
  claimedAt: "2026-12-02T00:00:00Z",
});
const view = (rows: OwnershipRow[], owner = "billing", environment = "billing-prod"): OwnershipView => ({
  claimant: { owner, environment },
  targets: { gateway: url, portal: "https://portal.example" },
  rows: new Map(rows.map((r) => [keyOf(r), r])),
});

const files = {
  "acme.yaml": orgKey({ name: "acme", rate: 5, per: 60 }),
  "own.yaml": orgKey({ name: "own", rate: 1, per: 60 }),
  "client.yaml": doc("OAuthClient", "app", "apiId: pay-api\nclientId: app-1\nredirect_uri: https://x"),
  "product.yaml": product({ name: "bundle", spec: "APIDetails: [{ APIID: pay-api }, { APIID: own-api }]" }),
  "grant.yaml": doc("OrgKey", "grant", "keyId: grant\nrate: 1\nper: 60\naccess_rights: { pay: { api_id: pay-api, api_name: pay, versions: [Default] } }"),
};
const payApi = (owner = "payments"): OwnershipRow => row("api:pay-api", owner, `${owner}-prod`, url, "ApiDefinition/pay");
const referenceNote =
  "references ApiDefinition/pay (api:pay-api), owned by team payments (environment payments-prod): a reference across owners, allowed (nothing of it is written)";

describe("the ownership check", () => {
  it("refuses the write of another owner's object by name, and plans the rest", async () => {
    const set = await desiredFrom(files);
    const plan = planFor(set, undefined, { ownership: view([row("org-key:acme", "payments"), payApi()]) });
    const acme = plan.changes.find((c) => c.id === "OrgKey/acme")!;
    expect(acme).toMatchObject({
      action: "blocked",
      ownedBy: { owner: "payments", environment: "payments-prod" },
      reason: "OWNED_ELSEWHERE: OrgKey/acme (org-key:acme on gateway https://gw.example) is owned by team payments (environment payments-prod)",
    });
    expect(acme.operation).toBeUndefined();
    expect(plan.changes.find((c) => c.id === "OrgKey/own")?.action).toBe("create");
    // a reference to payments' API is allowed, and said to be one
    const client = plan.changes.find((c) => c.id === "OAuthClient/app")!;
    // (an OAuth client cannot be created: its first apply is an update)
    expect(client.action).toBe("update");
    expect(client.notes).toContain(referenceNote);
    expect(plan.summary).toMatchObject({ blocked: 1, create: 3, update: 1 });
    expect(plan.summary.calls.total).toBe(4);
  });

  it("plans a product listing another owner's API and an org key granting it as references, each said once", async () => {
    const set = await desiredFrom(files);
    const plan = planFor(set, undefined, { ownership: view([payApi()]) });
    for (const id of ["ApiProduct/bundle", "OrgKey/grant", "OAuthClient/app"]) {
      const c = plan.changes.find((x) => x.id === id)!;
      expect([id, c.action === "blocked", c.ownedBy, c.notes.filter((n) => n.startsWith("references "))]).toEqual([id, false, undefined, [referenceNote]]);
    }
    // an API of its own owner, or none of anyone's, is no reference across owners
    const own = planFor(set, undefined, { ownership: view([payApi("billing")]) });
    expect(own.changes.flatMap((c) => c.notes).filter((n) => n.startsWith("references "))).toEqual([]);
    expect(
      planFor(set, undefined, { ownership: view([]) })
        .changes.flatMap((c) => c.notes)
        .filter((n) => n.startsWith("references ")),
    ).toEqual([]);
  });

  it("treats the same owner's other environment as another claimant, and its own row as its own", async () => {
    const set = await desiredFrom(files);
    const other = planFor(set, undefined, { ownership: view([row("org-key:acme", "billing", "billing-staging")]) });
    expect(other.changes.find((c) => c.id === "OrgKey/acme")?.reason).toContain("is owned by team billing (environment billing-staging)");
    const own = planFor(set, undefined, { ownership: view([row("org-key:acme", "billing")]) });
    expect(own.changes.find((c) => c.id === "OrgKey/acme")?.action).toBe("create");
  });

  it("reads no row of another target: a row for the same object elsewhere changes nothing", async () => {
    const set = await desiredFrom(files);
    const plan = planFor(set, undefined, { ownership: view([row("org-key:acme", "payments", "payments-prod", "https://other.example")]) });
    expect(plan.changes.some((c) => c.action === "blocked")).toBe(false);
    expect(plan.changes.every((c) => c.ownedBy === undefined)).toBe(true);
  });

  it("is the plan without a check when no registry is given", async () => {
    const set = await desiredFrom(files);
    const without = planFor(set);
    const empty = planFor(set, undefined, { ownership: view([]) });
    expect(empty.digest.read()).toBe(without.digest.read());
  });

  it("plans from the rows at its keys (a run's keyed read) as from every row of the target a fleet shares", async () => {
    const set = await desiredFrom(files);
    const state = emptySnapshot("");
    const fleet = Array.from({ length: 200 }, (_, i) => row(`org-key:team-${i}`, `team${i % 9}`));
    for (const rows of [[row("org-key:acme", "payments"), payApi()], [payApi()], [row("org-key:own", "billing")], []]) {
      const whole = view([...fleet, ...rows]);
      const crossing = [...whole.rows.values()].some((r) => r.object.startsWith("api:") && (r.owner !== "billing" || r.environment !== "billing-prod"));
      const keys = [...checkedKeys(set.desired, state, whole.targets), ...(crossing ? referencedApiKeys(set.desired, whole.targets) : [])];
      const wanted = new Set(keys.map(keyOf));
      const keyed = { ...whole, rows: new Map([...whole.rows].filter(([k]) => wanted.has(k))), crossing };
      expect(keyed.rows.size).toBeLessThanOrEqual(rows.length);
      const [fromKeys, fromAll] = [planFor(set, state, { ownership: keyed }), planFor(set, state, { ownership: whole })];
      expect(fromKeys.changes.map((c) => [c.id, c.action, c.ownedBy, c.notes])).toEqual(fromAll.changes.map((c) => [c.id, c.action, c.ownedBy, c.notes]));
      expect(fromKeys.digest.read()).toBe(fromAll.digest.read());
    }
  });
});
