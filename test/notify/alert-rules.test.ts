/** The example alert rules name only metrics the daemon serves, with labels it sets. */
import { readFile } from "node:fs/promises";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { parse } from "yaml";
import { DaemonMetrics } from "../../src/daemon/metrics/metrics.js";
import { notifyMetrics } from "../../src/notify/metrics.js";
import { projectRoot } from "../helpers/temp-repo.js";

interface Rules {
  groups: Array<{ name: string; rules: Array<{ alert: string; expr: string; for?: string; labels: { severity: string }; annotations: { summary: string } }> }>;
}

describe("examples/alerts/gatesync-rules.yaml", () => {
  it("is a Prometheus rule file whose every metric and label exists in /metrics", async () => {
    const rules = parse(await readFile(path.join(projectRoot, "examples/alerts/gatesync-rules.yaml"), "utf8")) as Rules;
    const metrics = new DaemonMetrics();
    notifyMetrics(metrics.registry);
    const served = new Map(metrics.registry.getMetricsAsArray().map((m) => [m.name, m]));
    const all = rules.groups.flatMap((g) => g.rules);
    expect(all.map((r) => r.alert)).toEqual(expect.arrayContaining(["GatesyncBehindBranch", "GatesyncNoSuccessfulRun", "GatesyncResourcesInDoubt"]));
    for (const rule of all) {
      expect(["warning", "critical"]).toContain(rule.labels.severity);
      expect(rule.annotations.summary).not.toBe("");
      if (rule.for !== undefined) expect(rule.for).toMatch(/^\d+[smh]$/);
      const names = [...rule.expr.matchAll(/\b(gatesync_[a-z_]+)\b/g)].map((m) => m[1]!);
      expect(names.length).toBeGreaterThan(0);
      for (const name of names) {
        expect(served.has(name), `${rule.alert}: ${name}`).toBe(true);
        const labelNames = (served.get(name) as unknown as { labelNames?: string[] }).labelNames ?? [];
        for (const m of rule.expr.matchAll(new RegExp(`${name}\\{([^}]*)\\}`, "g"))) {
          for (const label of m[1]!.split(",").map((l) => l.split(/[=!~]/)[0]!.trim())) expect(labelNames, `${rule.alert}: ${name}{${label}}`).toContain(label);
        }
      }
    }
  });

  it("judges each environment, not each replica: a rule on the runs aggregates by environment", async () => {
    const rules = parse(await readFile(path.join(projectRoot, "examples/alerts/gatesync-rules.yaml"), "utf8")) as Rules;
    // a standby serves every series too (its last success is its leader's): a rule on one replica's series would fire on standbys
    const onRuns = rules.groups.flatMap((g) => g.rules).filter((r) => !r.expr.includes("gatesync_notification"));
    expect(onRuns.length).toBeGreaterThan(4);
    for (const rule of onRuns) expect(rule.expr, rule.alert).toMatch(/^(min|max|sum) by \(environment\) \(/);
    // what only the leader knows is judged by the leader's series alone
    for (const name of ["GatesyncBehindBranch", "GatesyncResourcesInDoubt"])
      expect(onRuns.find((r) => r.alert === name)?.expr).toContain("and on (instance, environment) gatesync_leader == 1");
  });
});
