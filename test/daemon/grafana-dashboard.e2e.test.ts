/**
 * examples/grafana/gatesync-dashboard.json asks only for what a daemon exports: every metric its
 * queries name is on a real daemon's /metrics (`gatesync run` of two environments, production
 * promoted from staging after staging verified the revision), and each label a query selects or
 * groups by is on that metric's series.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { eventually } from "../helpers/eventually.js";
import { acmeKey, candidateReady, pagesReader, spawnedPromotionDaemon, untilAcmeRate } from "../helpers/promotion-daemon.js";
import type { SpawnedPromotionDaemon } from "../helpers/promotion-daemon.js";
import { call } from "../helpers/sandbox.js";
import { projectRoot, removeTempRepos } from "../helpers/temp-repo.js";

interface Panel {
  title: string;
  targets?: Array<{ expr: string }>;
}
const dashboard = JSON.parse(readFileSync(path.join(projectRoot, "examples/grafana/gatesync-dashboard.json"), "utf8")) as {
  panels: Panel[];
  links: Array<{ url: string }>;
  templating: { list: Array<{ query?: string }> };
};
const queries = [
  ...dashboard.panels.flatMap((p) => (p.targets ?? []).map((t) => t.expr)),
  ...dashboard.templating.list.flatMap((v) => (v.query?.includes("(") ? [v.query] : [])),
];

/** Only a fleet (replicas on one PostgreSQL state) has series of these: their TYPE line is checked, not their labels. */
const fleetOnly = new Set(["gatesync_environment_leaderless"]);

/** Each metric a query names, with the labels that query selects or groups by. */
function wanted(): Map<string, Set<string>> {
  const out = new Map<string, Set<string>>();
  for (const q of queries) {
    const labels = new Set<string>();
    for (const m of q.matchAll(/\b(?:by|on)\s*\(([^)]*)\)/g)) for (const l of m[1]!.split(",")) if (l.trim() !== "") labels.add(l.trim());
    for (const m of q.matchAll(/\{([^}]*)\}/g)) for (const s of m[1]!.matchAll(/(\w+)\s*=~?/g)) labels.add(s[1]!);
    for (const m of q.matchAll(/label_values\(\s*\w+\s*,\s*(\w+)\s*\)/g)) labels.add(m[1]!);
    for (const m of q.matchAll(/\bgatesync_\w+/g)) {
      const set = out.get(m[0]) ?? new Set<string>();
      for (const l of labels) set.add(l);
      out.set(m[0], set);
    }
  }
  return out;
}

let d: SpawnedPromotionDaemon;
beforeAll(async () => {
  // production promoted from staging, a 1 s soak there: staging verifies its revision, production takes it
  d = await spawnedPromotionDaemon(acmeKey(10));
  await candidateReady(d);
  const promoted = await d.promote({});
  expect(promoted.status, promoted.text).toBe(202);
  await untilAcmeRate(d, "production", 10, 60_000);
  // a second ask of the revision in force: nothing to do (result="in-force")
  expect((await d.promote({})).status).toBe(200);
  await eventually(
    () => call(`${d.url}/status`, pagesReader).then((r) => r.body as { environments?: Array<{ synced: boolean }> }),
    (s) => s.environments !== undefined && s.environments.every((e) => e.synced),
    60_000,
    () => d.process.output().slice(-3000),
  );
}, 180_000);
afterAll(async () => {
  await d?.stop();
  await removeTempRepos();
});

/** The value of one series of /metrics (undefined: no such series). */
function sample(text: string, name: string, labels: Record<string, string>): number | undefined {
  for (const m of text.matchAll(new RegExp(`^${name}\\{([^}]*)\\} (\\S+)$`, "gm"))) {
    const got = Object.fromEntries([...m[1]!.matchAll(/(\w+)="([^"]*)"/g)].map((l) => [l[1]!, l[2]!]));
    if (Object.entries(labels).every(([k, v]) => got[k] === v)) return Number(m[2]);
  }
  return undefined;
}

describe("the Grafana dashboard", () => {
  it("names only metrics a daemon exports, with the labels its queries use", async () => {
    const text = await (await fetch(`${d.url}/metrics`)).text();
    const want = wanted();
    expect(want.size).toBeGreaterThanOrEqual(16);
    const problems: string[] = [];
    for (const [name, labels] of want) {
      const base = name.replace(/_(bucket|sum|count)$/, "");
      if (!new RegExp(`^# TYPE ${base} `, "m").test(text)) {
        problems.push(`${name}: not exported`);
        continue;
      }
      if (fleetOnly.has(name)) continue;
      const series = [...text.matchAll(new RegExp(`^${name}\\{([^}]*)\\}`, "gm"))].map((m) => new Set([...m[1]!.matchAll(/(\w+)="/g)].map((l) => l[1]!)));
      if (series.length === 0) problems.push(`${name}: no series`);
      for (const l of labels) if (!series.some((s) => s.has(l))) problems.push(`${name}: no series with the label ${l}`);
    }
    expect(problems).toEqual([]);
  }, 30_000);

  it("counts the promotion and staging's verification it waited for", async () => {
    // the verifier judges after each run: production's own state settles once its run of the promotion is written
    await eventually(
      async () => (await fetch(`${d.url}/metrics`)).text(),
      (text) => sample(text, "gatesync_verification_state", { environment: "production", state: "verified" }) === 1,
      30_000,
    );
    const text = await (await fetch(`${d.url}/metrics`)).text();
    const production = { environment: "production", kind: "promotion", actor: "token" };
    expect(sample(text, "gatesync_promotions_total", { ...production, result: "recorded" })).toBe(1);
    expect(sample(text, "gatesync_promotions_total", { ...production, result: "in-force" })).toBe(1);
    // candidateReady asked dry runs until staging had verified the revision: some were refused, at least one was not
    expect(sample(text, "gatesync_promotions_total", { ...production, result: "dry-run" })).toBeGreaterThanOrEqual(1);
    expect(sample(text, "gatesync_verifications_total", { environment: "staging", result: "verified" })).toBe(1);
    expect(sample(text, "gatesync_verifications_total", { environment: "staging", result: "withdrawn" })).toBe(0);
    expect(sample(text, "gatesync_verification_state", { environment: "staging", state: "verified" })).toBe(1);
    expect(sample(text, "gatesync_verification_state", { environment: "staging", state: "soaking" })).toBe(0);
    expect(sample(text, "gatesync_soak_remaining_seconds", { environment: "staging" })).toBe(0);
  }, 40_000);

  it("links the alert rules, which exist", () => {
    const link = dashboard.links.find((l) => l.url.endsWith("examples/alerts/gatesync-rules.yaml"));
    expect(link).toBeDefined();
    expect(readFileSync(path.join(projectRoot, "examples/alerts/gatesync-rules.yaml"), "utf8")).toContain("alert: GatesyncEnvironmentLeaderless");
  });
});
