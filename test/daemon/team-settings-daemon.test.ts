/**
 * What a commit decides and what it cannot (issue 44): a daemon of two environments follows a
 * real bare git repository; its own gatesync.yaml (outside the repository) holds the operator's
 * settings, the repository's gatesync.yaml the team's. Pushes change a staging value, a
 * production overlay patch, every target URL (to a decoy listener) and the orphan policy.
 */
import { createServer } from "node:http";
import type { Server } from "node:http";
import type { AddressInfo } from "node:net";
import { readFile, rm, symlink, writeFile } from "node:fs/promises";
import path from "node:path";
import { Writable } from "node:stream";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { Daemon } from "../../src/daemon/daemon.js";
import { createLogger } from "../../src/logger.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { eventually } from "../helpers/eventually.js";
import { doc } from "../helpers/plan.js";
import { call } from "../helpers/sandbox.js";
import { removeTempRepos } from "../helpers/temp-repo.js";
import { syncToken, twoEnvironments } from "../helpers/two-environments.js";
import type { TwoEnvironments } from "../helpers/two-environments.js";

let staging: SandboxHandle;
let production: SandboxHandle;
let decoy: Server;
let decoyUrl: string;
const decoyRequests: string[] = [];
let setup: TwoEnvironments;
let daemon: Daemon;
const logLines: string[] = [];

interface RepoSettings {
  readonly stagingRate: number;
  readonly targetsUrl?: string;
  readonly orphans?: string;
  readonly extraEnvironment?: boolean;
}

/** The repository's gatesync.yaml: the team's settings, and (as a laptop keeps them) operator settings for local use. */
const repoSettings = (s: RepoSettings): string => {
  const url = s.targetsUrl ?? "http://127.0.0.1:8081";
  return `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
${s.orphans === undefined ? "" : `orphans: ${s.orphans}\n`}environments:
  staging:
    targets: { gateway: { url: ${url}, credentialEnv: GW_KEY } }
    values: { rate: ${s.stagingRate} }
  production:
    targets: { gateway: { url: ${url}, credentialEnv: GW_KEY } }
    values: { rate: 20 }
    patches: [overlays/production.yaml]
${s.extraEnvironment === true ? `  qa:\n    targets: { gateway: { url: ${url}, credentialEnv: GW_KEY } }\n` : ""}`;
};

const overlay = (rate: number): string => `apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: globex }\nspec: { rate: ${rate} }\n`;

const keys = (withGlobex = true): string =>
  [doc("OrgKey", "acme", "keyId: org-acme\nrate: ${var:rate}"), ...(withGlobex ? [doc("OrgKey", "globex", "keyId: org-globex\nrate: 5")] : [])].join("---\n");

const push = (files: Record<string, string>, message: string): Promise<string> => setup.push(files, message);
const syncTo = (commit: string): Promise<void> => setup.syncTo(commit);

const writes = (s: SandboxHandle): number => s.inspect.calls().log.filter((c) => !c.internal && c.method !== "GET").length;
const rate = (s: SandboxHandle, key: string): unknown => s.inspect.store.orgKeys.get(key)?.session.rate;

interface StatusBody {
  environments: Array<{
    environment: string;
    lastRun: { result: string; ignoredSettings?: Array<{ path: string; message: string; line?: number; file: string }> };
  }>;
}
const ignoredOn = async (environment: string): Promise<Array<{ path: string; message: string; line?: number; file: string }>> => {
  const body = (await call(`${daemon.url}/status`)).body as StatusBody;
  return body.environments.find((e) => e.environment === environment)?.lastRun.ignoredSettings ?? [];
};

beforeAll(async () => {
  decoy = createServer((req, res) => {
    decoyRequests.push(`${req.method} ${req.url}`);
    res.writeHead(500).end();
  });
  await new Promise<void>((resolve) => decoy.listen(0, "127.0.0.1", resolve));
  decoyUrl = `http://127.0.0.1:${(decoy.address() as AddressInfo).port}`;
  const sink = new Writable({ write: (chunk: Buffer, _e, done) => (logLines.push(...chunk.toString().split("\n").filter(Boolean)), done()) });
  setup = await twoEnvironments(
    { "config/keys.yaml": keys(), "overlays/production.yaml": overlay(50), "gatesync.yaml": repoSettings({ stagingRate: 10 }) },
    createLogger({ level: "info", destination: sink }),
  );
  ({ staging, production, daemon } = setup);
  expect((await daemon.firstRun).result).toBe("applied");
}, 60_000);

afterAll(async () => {
  await setup?.stop();
  await new Promise((resolve) => decoy?.close(resolve));
  await removeTempRepos();
});

describe("a daemon applies the team settings of the commit", () => {
  it("applies the repository's values and overlay patches of each environment", () => {
    expect([rate(staging, "org-acme"), rate(staging, "org-globex")]).toEqual([10, 5]);
    expect([rate(production, "org-acme"), rate(production, "org-globex")]).toEqual([20, 50]);
  });

  it("applies a commit that changes a staging value in staging only", async () => {
    const before = [writes(staging), writes(production)];
    await syncTo(await push({ "gatesync.yaml": repoSettings({ stagingRate: 11 }) }, "staging: rate 11"));
    expect(rate(staging, "org-acme")).toBe(11);
    expect([writes(staging) - before[0]!, writes(production) - before[1]!]).toEqual([1, 0]);
  });

  it("applies a commit that changes a production overlay patch in production only", async () => {
    const before = [writes(staging), writes(production)];
    await syncTo(await push({ "overlays/production.yaml": overlay(60) }, "production: globex 60"));
    expect(rate(production, "org-globex")).toBe(60);
    expect([writes(staging) - before[0]!, writes(production) - before[1]!]).toEqual([0, 1]);
  });
});

describe("a commit cannot widen its own authority", () => {
  it("sends nothing to the targets a commit writes; the ignored settings are in /status and on the page, and logged once", async () => {
    const commit = await push({ "gatesync.yaml": repoSettings({ stagingRate: 12, targetsUrl: decoyUrl, extraEnvironment: true }) }, "every target elsewhere");
    await syncTo(commit);
    expect(rate(staging, "org-acme")).toBe(12);
    expect(decoyRequests).toEqual([]);
    const ignored = await ignoredOn("staging");
    const url = ignored.find((d) => d.path === "environments.staging.targets.gateway.url");
    expect(url?.file).toBe("gatesync.yaml");
    expect(url?.line).toBe(6);
    expect(url?.message).toContain(staging.urls.gateway);
    expect(ignored.find((d) => d.path === "environments.qa")?.message).toMatch(/environment qa is not one the daemon runs: it is skipped/);
    const page = await call(`${daemon.url}/environments/production/`);
    expect(page.text).toContain("Settings of the repository's gatesync.yaml the daemon ignores");
    expect(page.text).toContain("environments.production.targets.gateway.url");
    // a second run of the same commit does not say it again
    await call(`${daemon.url}/sync`, { method: "POST", headers: { authorization: `Bearer ${syncToken}` } });
    await eventually(
      () => daemon.environments.get("production")?.lastRun?.reason,
      (r) => r === "sync",
    );
    await eventually(
      () => daemon.environments.get("staging")?.lastRun?.result,
      (r) => r === "noop" || r === "applied",
    );
    expect(logLines.filter((l) => l.includes("operator settings the daemon ignores") && l.includes(commit))).toHaveLength(1);
    // the daemon's own file's leftover team setting: said once, since the daemon started
    const replaced = logLines.filter((l) => l.includes("the daemon's own gatesync.yaml sets team settings"));
    expect(replaced).toHaveLength(1);
    expect(replaced[0]).toContain('"settings":["environments.staging.values"]');
  });

  it("stops saying that its own file sets team settings once they are removed from it, as the hint says", async () => {
    const before = logLines.length;
    await writeFile(setup.operatorFile, (await readFile(setup.operatorFile, "utf8")).replace("    values: { rate: 99 }\n", ""));
    expect(await daemon.reload("SIGHUP")).toBe("reloaded");
    await syncTo(await push({ "README.md": "gateway config\n" }, "a readme"));
    expect(logLines.slice(before).filter((l) => l.includes("the daemon's own gatesync.yaml sets team settings"))).toEqual([]);
    expect(rate(staging, "org-acme")).toBe(12);
  });

  it("keeps the operator's orphan policy when a commit changes it", async () => {
    const commit = await push(
      { "gatesync.yaml": repoSettings({ stagingRate: 12, orphans: "deactivate" }), "config/keys.yaml": keys(false) },
      "orphans: deactivate",
    );
    await syncTo(commit);
    const globex = staging.inspect.calls().log.filter((c) => !c.internal && c.method !== "GET" && c.path.includes("org-globex"));
    expect(globex).toHaveLength(1);
    const orphans = (await ignoredOn("staging")).find((d) => d.path === "orphans");
    expect(orphans?.message).toContain("report");
  });

  it("says nothing once the ignored settings are removed from the repository's file, as the hint says", async () => {
    const hint = (await ignoredOn("staging"))[0];
    expect(hint).toBeDefined();
    const teamOnly = `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
environments:
  staging:
    values: { rate: 12 }
  production:
    values: { rate: 20 }
    patches: [overlays/production.yaml]
`;
    await syncTo(await push({ "gatesync.yaml": teamOnly }, "operator settings left to the operator"));
    expect(await ignoredOn("staging")).toEqual([]);
    expect(await ignoredOn("production")).toEqual([]);
    expect(rate(production, "org-globex")).toBe(60);
  });

  it("runs an environment the repository does not name with the top-level values and no patches of its own", async () => {
    const before = writes(staging);
    const stagingOnly = `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
values: { rate: 7 }
environments:
  staging:
    values: { rate: 12 }
`;
    await syncTo(await push({ "gatesync.yaml": stagingOnly, "config/keys.yaml": keys() }, "production's settings removed, globex back"));
    expect([rate(production, "org-acme"), rate(production, "org-globex")]).toEqual([7, 5]);
    expect(writes(staging) - before).toBe(0);
  });

  it("does not let a commit turn on the rulesets' custom functions: they are the operator's to allow", async () => {
    const ruleset = "functions: [noTodo]\nrules:\n  no-todo:\n    given: $.metadata.name\n    severity: error\n    then: { function: noTodo }\n";
    const settings = `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
rules: { resources: rules/resources.yaml, allowCustomFunctions: true }
environments:
  staging:
    values: { rate: 12 }
  production:
    values: { rate: 20 }
    patches: [overlays/production.yaml]
`;
    const commit = await push(
      { "gatesync.yaml": settings, "rules/resources.yaml": ruleset, "rules/functions/noTodo.js": "export default () => [];\n" },
      "rules with a custom function",
    );
    await syncTo(commit);
    const run = daemon.environments.get("staging")?.lastRun;
    expect(run?.result).toBe("invalid");
    expect(run?.diagnostics?.map((d) => d.message).join("\n")).toContain("is JavaScript from the repository: it is not loaded");
    const ignored = (await ignoredOn("staging")).find((d) => d.path === "rules.allowCustomFunctions");
    expect(ignored?.message).toContain("not set (its default)");
  });

  it("does not let a commit lift the rules' time budgets: they are the operator's", async () => {
    const settings = `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
rules: { resources: rules/resources.yaml, documentTimeout: 24h, runTimeout: 48h }
environments:
  staging:
    values: { rate: 12 }
  production:
    values: { rate: 20 }
    patches: [overlays/production.yaml]
`;
    const ruleset = "rules:\n  named:\n    given: $.metadata.name\n    severity: error\n    then: { function: truthy }\n";
    await syncTo(await push({ "gatesync.yaml": settings, "rules/resources.yaml": ruleset }, "rules with a day's budget"));
    const ignored = (await ignoredOn("staging")).filter((d) => d.path.startsWith("rules.")).map((d) => d.path);
    expect(ignored.sort()).toEqual(["rules.documentTimeout", "rules.runTimeout"]);
    // the team's rulesets are in force, the operator's budgets (none set: the defaults) with them
    const operator = daemon.environments.get("staging")!;
    expect(operator.lastRun?.result).not.toBe("invalid");
  });

  it("refuses a commit whose settings file leads outside the repository, or is too large, without reading it", async () => {
    await rm(path.join(setup.work, "gatesync.yaml"));
    await symlink("/etc/passwd", path.join(setup.work, "gatesync.yaml"));
    await syncTo(await push({}, "gatesync.yaml: a link out of the repository"));
    const linked = daemon.environments.get("staging")?.lastRun;
    expect(linked?.result).toBe("invalid");
    expect(linked?.diagnostics?.[0]?.message).toBe("the repository's settings file gatesync.yaml lies outside the repository");
    expect(JSON.stringify(linked)).not.toContain("root:");
    await rm(path.join(setup.work, "gatesync.yaml"));
    await syncTo(await push({ "gatesync.yaml": `# ${"x".repeat(6 * 1024 * 1024)}\n` }, "gatesync.yaml: 6 MiB"));
    const large = daemon.environments.get("production")?.lastRun;
    expect([large?.result, large?.diagnostics?.[0]?.code]).toEqual(["invalid", "FILE_TOO_LARGE"]);
  });
});
