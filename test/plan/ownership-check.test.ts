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
import { desiredFrom, doc, planFor } from "../helpers/plan.js";
import { orgKey } from "../helpers/resources.js";

const url = "https://gw.example";
const row = (object: string, owner: string, environment = `${owner}-prod`, at = url): OwnershipRow => ({
  interface: "gateway",
  url: at,
  object,
  owner,
  environment,
  resource: "OrgKey/x",
  claimedAt: "2026-12-02T00:00:00Z",
});
const view = (rows: OwnershipRow[], owner = "billing", environment = "billing-prod"): OwnershipView => ({
  claimant: { owner, environment },
  targets: { gateway: url },
  rows: new Map(rows.map((r) => [keyOf(r), r])),
});

const files = {
  "acme.yaml": orgKey({ name: "acme", rate: 5, per: 60 }),
  "own.yaml": orgKey({ name: "own", rate: 1, per: 60 }),
  "client.yaml": doc("OAuthClient", "app", "apiId: pay-api\nclientId: app-1\nredirect_uri: https://x"),
};

describe("the ownership check", () => {
  it("refuses the write of another owner's object by name, and plans the rest", async () => {
    const set = await desiredFrom(files);
    const plan = planFor(set, undefined, { ownership: view([row("org-key:acme", "payments"), row("api:pay-api", "payments")]) });
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
    expect(client.notes).toContain(
      "references API pay-api, owned by team payments (environment payments-prod): a reference across owners, allowed (nothing of it is written)",
    );
    expect(plan.summary).toMatchObject({ blocked: 1, create: 1, update: 1 });
    expect(plan.summary.calls.total).toBe(2);
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
});
