/**
 * examples/grafana/gatesync-dashboard.json asks only for what a daemon exports: every metric its
 * queries name is on a real daemon's /metrics (two environments, synced against a sandbox), and
 * each label a query selects or groups by is on that metric's series.
 */
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { spawnDaemon, stopDaemon } from "../helpers/daemon-process.js";
import { eventually } from "../helpers/eventually.js";
import { doc } from "../helpers/resources.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { call, testSandbox } from "../helpers/sandbox.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

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

let sandbox: SandboxHandle;
let daemon: DaemonProcess;
beforeAll(async () => {
  sandbox = await testSandbox();
  // each environment its own key: one object in two environments would have two owners (docs/user/teams.md)
  const dir = await tempRepo({ "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme-${var:env}\nrate: 10\nper: 60") });
  const target = `{ gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY } }`;
  writeFileSync(
    path.join(dir, "gatesync.yaml"),
    `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
targets:
  gateway: { url: http://127.0.0.1:9, credentialEnv: GW_KEY }
environments:
  staging: { values: { env: staging }, targets: ${target}, state: { backend: sqlite, path: .gatesync/staging.db } }
  production: { values: { env: production }, targets: ${target}, state: { backend: sqlite, path: .gatesync/production.db } }
state: { backend: sqlite, path: .gatesync/state.db }
schedule: { interval: 1h, jitter: 0 }
server: { listen: "127.0.0.1:0" }
`,
  );
  daemon = await spawnDaemon("gatesync.yaml", dir);
  await eventually(
    () => call(`${daemon.url}/status`).then((r) => r.body as { synced?: boolean; environments?: Array<{ synced: boolean }> }),
    (s) => s.synced === true || (s.environments !== undefined && s.environments.every((e) => e.synced)),
    60_000,
    () => daemon.output().slice(-3000),
  );
}, 120_000);
afterAll(async () => {
  await stopDaemon(daemon);
  await sandbox?.stop();
  await removeTempRepos();
});

describe("the Grafana dashboard", () => {
  it("names only metrics a daemon exports, with the labels its queries use", async () => {
    const text = await (await fetch(`${daemon.url}/metrics`)).text();
    const want = wanted();
    expect(want.size).toBeGreaterThanOrEqual(12);
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

  it("links the alert rules, which exist", () => {
    const link = dashboard.links.find((l) => l.url.endsWith("examples/alerts/gatesync-rules.yaml"));
    expect(link).toBeDefined();
    expect(readFileSync(path.join(projectRoot, "examples/alerts/gatesync-rules.yaml"), "utf8")).toContain("alert: GatesyncEnvironmentLeaderless");
  });
});
