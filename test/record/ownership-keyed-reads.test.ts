/**
 * A run reads the ownership registry by key (rowsAt: its own objects) and asks one boolean of
 * it (othersHold: does another claimant hold an API on the gateway) — never every row of a
 * target a fleet shares, whose size grows with every environment of the fleet. Both registries
 * a daemon uses answer the same: PostgreSQL (the shared table) and SQLite (the file beside the
 * states).
 */
import { randomBytes } from "node:crypto";
import { mkdtemp, rm } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { PostgresOwnership, ownershipSchema } from "../../src/record/ownership/postgres-ownership.js";
import { SqliteOwnership } from "../../src/record/ownership/sqlite-ownership.js";
import { keyOf } from "../../src/record/ownership/ownership.js";
import type { OwnershipClaim, OwnershipRegistry } from "../../src/record/ownership/ownership.js";
import { postgresBackend } from "../helpers/postgres.js";

const dirs: string[] = [];
afterAll(async () => {
  for (const d of dirs) await rm(d, { recursive: true, force: true });
});

const registries: Array<[string, () => Promise<OwnershipRegistry>]> = [
  ["PostgreSQL", () => Promise.resolve(new PostgresOwnership(postgresBackend(ownershipSchema)))],
  [
    "SQLite",
    async () => {
      const dir = await mkdtemp(path.join(tmpdir(), "gatesync-ownership-"));
      dirs.push(dir);
      return new SqliteOwnership(path.join(dir, "ownership.db"));
    },
  ],
];

describe.each(registries)("the %s registry's keyed reads", (_name, open) => {
  it("answers the rows of exactly the keys asked, and whether another claimant holds an object of a kind", async () => {
    const registry = await open();
    // a target of this test alone: the PostgreSQL table is shared by every test and daemon of the database
    const url = `https://gw-${randomBytes(4).toString("hex")}.example`;
    const claim = (object: string, owner: string, environment = `${owner}-prod`): OwnershipClaim => ({
      interface: "gateway",
      url,
      object,
      owner,
      environment,
      resource: `OrgKey/${object}`,
    });
    try {
      const fleet = Array.from({ length: 300 }, (_, i) => claim(`org-key:k${i}`, `team${i % 7}`));
      await registry.claim([...fleet, claim("api:pay", "payments")], "2026-12-03T00:00:00Z");
      const asked = [fleet[3]!, fleet[250]!, { interface: "gateway", url, object: "org-key:nobody" }, { interface: "portal", url, object: "org-key:k3" }];
      const rows = await registry.rowsAt(asked);
      expect(rows.map(keyOf).sort()).toEqual([keyOf(fleet[3]!), keyOf(fleet[250]!)].sort());
      expect(rows.find((r) => r.object === "org-key:k3")).toMatchObject({ owner: "team3", environment: "team3-prod", resource: "OrgKey/org-key:k3" });
      expect(await registry.rowsAt([])).toEqual([]);

      const gateway = { interface: "gateway", url };
      expect(await registry.othersHold(gateway, "api", { owner: "billing", environment: "billing-prod" })).toBe(true);
      // its own API, or the same owner's other environment
      expect(await registry.othersHold(gateway, "api", { owner: "payments", environment: "payments-prod" })).toBe(false);
      expect(await registry.othersHold(gateway, "api", { owner: "payments", environment: "payments-staging" })).toBe(true);
      // a prefix is the kind's, whole: `api` is not `apis`, and another target is another target
      expect(await registry.othersHold(gateway, "ap", { owner: "billing", environment: "billing-prod" })).toBe(false);
      expect(await registry.othersHold({ interface: "gateway", url: `${url}/other` }, "api", { owner: "billing", environment: "b" })).toBe(false);
    } finally {
      for (const o of ["api:pay", ...Array.from({ length: 300 }, (_, i) => `org-key:k${i}`)]) await registry.release({ interface: "gateway", url, object: o });
      await registry.close();
    }
  });
});
