/**
 * Governance rules in the daemon: a commit that breaks an error rule is refused (nothing sent,
 * the last good commit stays in force, the finding in /status and on the status page), a
 * warning is shown with the applied run, and a reload with a ruleset that does not load keeps
 * the last good configuration and its rulesets.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startDaemon } from "../../src/daemon/daemon.js";
import type { Daemon } from "../../src/daemon/daemon.js";
import { silentLogger } from "../../src/logger.js";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { git } from "../helpers/git-repo.js";
import { doc } from "../helpers/plan.js";
import { call } from "../helpers/sandbox.js";
import { positionOf, removeTempRepos } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
let h: Harness | undefined;
let daemon: Daemon | undefined;
afterEach(async () => {
  await daemon?.stop();
  daemon = undefined;
  await h?.stop();
  h = undefined;
});

/** No organisation key above an agreed rate; an error. */
const rateRule = (max: number, severity: string): string => `rules:
  org-key-rate:
    description: No organisation key above the agreed rate.
    message: "rate {{value}} is above the agreed ${max} per period"
    given: "$.spec.rate"
    severity: ${severity}
    then: { function: schema, functionOptions: { schema: { type: number, maximum: ${max} } } }
`;

interface StatusBody {
  commit?: string;
  lastRun: { result: string; revision?: string; errors?: Array<Record<string, unknown>>; ruleFindings?: Array<Record<string, unknown>> } | null;
  config: { hash: string; error?: { diagnostics: Array<Record<string, unknown>> } };
}

describe("governance rules in the daemon", () => {
  it("refuses a commit that breaks an error rule, sends nothing, keeps the last good commit, and says why in /status and on the page", async () => {
    h = await harness({ files: { "keys.yaml": doc("OrgKey", "acme", "keyId: acme\nrate: 100") }, configExtra: "rules: { resources: rules/resources.yaml }\n" });
    await mkdir(path.join(h.dir, "rules"));
    await writeFile(path.join(h.dir, "rules/resources.yaml"), rateRule(1000, "error"));
    // the resources are a git repository the daemon follows
    const repo = path.join(h.dir, "config");
    git(repo, "init", "-q", "-b", "main");
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "good");
    const good = git(repo, "rev-parse", "HEAD");
    const base = await h.config();
    const config = { ...base, source: { type: "git" as const, url: repo, branch: "main", subdirectory: ".", cacheDir: path.join(h.dir, "cache") } };
    daemon = await startDaemon({ config, env: h.env, logger: silentLogger(), listen: "127.0.0.1:0", state: h.state, watchConfig: false });
    const first = await daemon.reconciler.runOnce("start");
    expect(first.result).toBe("applied");
    expect(daemon.reconciler.lastGood?.commit).toBe(good);
    const calls = h.sandbox.inspect.calls().log.length;

    const broken = doc("OrgKey", "acme", "keyId: acme\nrate: 5000");
    await writeFile(path.join(repo, "keys.yaml"), broken);
    git(repo, "commit", "-q", "-am", "raise the rate");
    const bad = git(repo, "rev-parse", "HEAD");
    const refused = await daemon.reconciler.runOnce("sync");
    expect(refused.result).toBe("invalid");
    expect(refused.commit).toBe(bad);
    const at = positionOf(broken, "5000");
    expect(refused.diagnostics).toContainEqual(
      expect.objectContaining({
        severity: "error",
        code: "RULESET_VIOLATION",
        rule: "org-key-rate",
        file: "keys.yaml",
        ...at,
        resource: "OrgKey/acme",
        message: "rate 5000 is above the agreed 1000 per period",
      }),
    );
    expect(h.sandbox.inspect.calls().log.length).toBe(calls);
    expect(daemon.reconciler.lastGood?.commit).toBe(good);
    expect(h.sandbox.inspect.store.orgKeys.get("acme")?.session.rate).toBe(100);

    const status = (await call(`${daemon.url}/status`)).body as StatusBody;
    expect(status.lastRun?.result).toBe("invalid");
    expect(status.lastRun?.errors).toContainEqual(expect.objectContaining({ rule: "org-key-rate", line: at.line }));
    const page = await fetch(`${daemon.url}/`);
    const html = await page.text();
    expect(html).toContain("Why the commit was refused");
    expect(html).toContain("RULESET_VIOLATION org-key-rate");
    expect(html).toContain(`keys.yaml:${at.line}:${at.column}`);
  }, 60_000);

  it("shows a warning rule's findings with the applied run", async () => {
    h = await harness({
      files: { "keys.yaml": doc("OrgKey", "acme", "keyId: acme\nrate: 5000") },
      configExtra: "rules: { resources: rules/resources.yaml }\n",
    });
    await mkdir(path.join(h.dir, "rules"));
    await writeFile(path.join(h.dir, "rules/resources.yaml"), rateRule(1000, "warn"));
    daemon = await startDaemon({ config: await h.config(), env: h.env, logger: silentLogger(), listen: "127.0.0.1:0", state: h.state, watchConfig: false });
    const run = await daemon.reconciler.runOnce("start");
    expect(run.result).toBe("applied");
    expect(run.ruleFindings).toContainEqual(expect.objectContaining({ severity: "warning", rule: "org-key-rate", file: "keys.yaml" }));
    const status = (await call(`${daemon.url}/status`)).body as StatusBody;
    expect(status.lastRun?.ruleFindings).toHaveLength(1);
    const html = await (await fetch(`${daemon.url}/`)).text();
    expect(html).toContain("Rules: 1 finding(s) that do not stop the commit");
  }, 60_000);

  it("keeps the last good configuration and its rulesets when a reload brings a ruleset that does not load", async () => {
    h = await harness({
      files: { "keys.yaml": doc("OrgKey", "acme", "keyId: acme\nrate: 5000") },
      configExtra: "rules: { resources: rules/resources.yaml }\n",
    });
    await mkdir(path.join(h.dir, "rules"));
    const rules = path.join(h.dir, "rules/resources.yaml");
    await writeFile(rules, rateRule(1000, "warn"));
    daemon = await startDaemon({ config: await h.config(), env: h.env, logger: silentLogger(), listen: "127.0.0.1:0", state: h.state, watchConfig: false });
    const inForce = daemon.reconciler.configInForce.hash;
    await writeFile(rules, "rules:\n  org-key-rate:\n    given: $.spec.rate\n    then: { function: nope }\n");
    expect(await daemon.reload("SIGHUP")).toBe("refused");
    const status = (await call(`${daemon.url}/status`)).body as StatusBody;
    expect(status.config.error?.diagnostics).toContainEqual(
      expect.objectContaining({ code: "CONFIG_INVALID", line: 4, message: expect.stringContaining("`nope` is neither a core function") as string }),
    );
    expect(daemon.reconciler.configInForce.hash).toBe(inForce);
    // the rulesets in force are the ones bundled before: the run still lints with them
    const run = await daemon.reconciler.runOnce("sync");
    expect(run.ruleFindings).toContainEqual(expect.objectContaining({ rule: "org-key-rate" }));
    // a fixed ruleset is a changed configuration: put in force by the next reload
    await writeFile(rules, rateRule(10_000, "warn"));
    expect(await daemon.reload("SIGHUP")).toBe("reloaded");
    expect((await daemon.reconciler.runOnce("sync")).ruleFindings).toBeUndefined();
    expect(await readFile(rules, "utf8")).toContain("10000");
  }, 60_000);
});
