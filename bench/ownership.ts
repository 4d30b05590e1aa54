/**
 * What ownership (docs/user/teams.md) costs a run: the planner's check of N resources against a
 * registry of N rows (half of them another owner's) — and with another owner's API among them, when
 * each org key's access rights are read for references across owners — and the SQLite registry's read and claim of
 * N rows. The check is one map lookup per change (O(changes + rows)), the read O(rows of the
 * environment's targets), the claim O(unclaimed objects) — never their product.
 *
 *   npx tsx bench/ownership.ts        # writes bench/results.ownership.json
 */
import { mkdtemp, rm, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { performance } from "node:perf_hooks";
import { computePlan } from "../src/plan/plan.js";
import type { OwnershipView } from "../src/plan/ownership-check.js";
import { keyOf } from "../src/record/ownership/ownership.js";
import type { OwnershipClaim, OwnershipRow } from "../src/record/ownership/ownership.js";
import { SqliteOwnership } from "../src/record/ownership/sqlite-ownership.js";
import { desiredFrom, emptyState, planOptions } from "../test/helpers/plan.js";
import { numberedOrgKeys } from "../test/helpers/resources.js";

const url = "https://gw.example";
const median = (xs: number[]): number => [...xs].sort((a, b) => a - b)[Math.floor(xs.length / 2)]!;

async function timed(work: () => unknown, reps = 5): Promise<number> {
  const times: number[] = [];
  for (let i = 0; i < reps; i++) {
    const t = performance.now();
    await work();
    times.push(performance.now() - t);
  }
  return Math.round(median(times) * 10) / 10;
}

const claimOf = (i: number, owner: string): OwnershipClaim => ({
  interface: "gateway",
  url,
  object: `org-key:key-${i}`,
  owner,
  environment: owner,
  resource: `OrgKey/k${i}`,
});

async function planFigures(n: number): Promise<Record<string, number>> {
  const set = await desiredFrom(numberedOrgKeys(n));
  const rows: OwnershipRow[] = Array.from({ length: n }, (_, i) => ({
    ...claimOf(i, i % 2 === 0 ? "payments" : "billing"),
    claimedAt: "2026-12-02T00:00:00Z",
  }));
  const view: OwnershipView = {
    claimant: { owner: "billing", environment: "billing" },
    targets: { gateway: url },
    rows: new Map(rows.map((r) => [keyOf(r), r])),
  };
  const without = await timed(() => computePlan(set.desired, emptyState, planOptions));
  const withCheck = await timed(() => computePlan(set.desired, emptyState, { ...planOptions, ownership: view }));
  // another owner's API on the gateway: each org key's access rights are read for references across owners
  const api: OwnershipRow = { ...claimOf(0, "payments"), object: "api:pay-api", resource: "ApiDefinition/pay", claimedAt: "2026-12-02T00:00:00Z" };
  const withApi: OwnershipView = { ...view, rows: new Map([...view.rows, [keyOf(api), api]]) };
  const withReferences = await timed(() => computePlan(set.desired, emptyState, { ...planOptions, ownership: withApi }));
  return { resources: n, planMs: without, planWithOwnershipMs: withCheck, planWithForeignApiMs: withReferences };
}

async function registryFigures(n: number): Promise<Record<string, number>> {
  const dir = await mkdtemp(path.join(tmpdir(), "gatesync-bench-ownership-"));
  const registry = new SqliteOwnership(path.join(dir, "ownership.db"));
  try {
    const claims = Array.from({ length: n }, (_, i) => claimOf(i, "payments"));
    const t = performance.now();
    await registry.claim(claims, "2026-12-02T00:00:00Z");
    const firstClaimMs = Math.round((performance.now() - t) * 10) / 10;
    const readMs = await timed(() => registry.rowsOf([{ interface: "gateway", url }]));
    return { rows: n, firstClaimMs, readMs };
  } finally {
    await registry.close();
    await rm(dir, { recursive: true, force: true });
  }
}

const sizes = [100, 1000, 10_000];
const plan = [];
const registry = [];
for (const n of sizes) {
  plan.push(await planFigures(n));
  registry.push(await registryFigures(n));
}
console.table(plan);
console.table(registry);
await writeFile(path.join(import.meta.dirname, "results.ownership.json"), `${JSON.stringify({ plan, registry }, null, 2)}\n`);
