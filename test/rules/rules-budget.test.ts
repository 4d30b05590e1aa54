/**
 * Every rule run is bounded (docs/user/rules.md, "Budgets"): `pattern` runs on a linear-time
 * engine, and a rule that backtracks anyway (a JSON Schema `pattern`, ajv's RegExp) is stopped
 * past the document's budget and reported as a located RULE_TIMEOUT error — by a one-shot
 * `gatesync validate`, which returns, and by a daemon, which refuses that commit and applies
 * the next one at once.
 */
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, afterEach, describe, expect, it } from "vitest";
import { startDaemon } from "../../src/daemon/daemon.js";
import type { Daemon } from "../../src/daemon/daemon.js";
import { silentLogger } from "../../src/logger.js";
import type { Harness } from "../helpers/apply.js";
import { harness } from "../helpers/apply.js";
import { spawnCli } from "../helpers/cli.js";
import { git } from "../helpers/git-repo.js";
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

/** An ordinary-looking pattern that backtracks exponentially on a value ending in a character it does not allow. */
const backtracking = "^([A-Za-z0-9]+ ?)+$";
const stuckValue = `${"a".repeat(60)}!`;

/** The examples' repository with rulesets beside gatesync.yaml, and `rules:` settings. */
async function withRules(rulesets: { openapi?: string; resources?: string }, settings = ""): Promise<Harness> {
  const names = Object.keys(rulesets).map((t) => `${t}: rules/${t}.spectral.yaml`);
  const made = await harness({ configExtra: `rules: { ${[...names, settings].filter((s) => s !== "").join(", ")} }\n` });
  await mkdir(path.join(made.dir, "rules"), { recursive: true });
  for (const [target, text] of Object.entries(rulesets)) await writeFile(path.join(made.dir, "rules", `${target}.spectral.yaml`), text);
  return made;
}

/** The petstore document's title made `title`. */
async function titled(dir: string, title: string): Promise<{ file: string; text: string }> {
  const file = path.join(dir, "config/openapi/petstore.yaml");
  const text = (await readFile(file, "utf8")).replace(/^( {2}title: ).*$/m, `$1${JSON.stringify(title)}`);
  await writeFile(file, text);
  return { file, text };
}

const silent = { GATESYNC_LOG_LEVEL: "silent" };

describe("rules within a budget", { timeout: 120_000 }, () => {
  it("the `pattern` function runs in linear time: a backtracking pattern on a 60-character title is a finding at once", async () => {
    h = await withRules({
      openapi: `rules:\n  title-words:\n    given: "$.info.title"\n    severity: error\n    then: { function: pattern, functionOptions: { match: ${JSON.stringify(backtracking)} } }\n`,
    });
    const { text } = await titled(h.dir, stuckValue);
    const started = Date.now();
    const r = await spawnCli(["validate", "--config", path.join(h.dir, "gatesync.yaml")], { env: { ...h.env, ...silent } });
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(r.code).toBe(1);
    const at = positionOf(text, JSON.stringify(stuckValue));
    expect(r.stdout).toContain(`error[RULESET_VIOLATION title-words] openapi/petstore.yaml:${at.line}:${at.column}`);
    expect(r.stdout + r.stderr).not.toContain("RULE_TIMEOUT");
  });

  it("a pattern RE2 cannot compile is a located CONFIG_INVALID naming the syntax", async () => {
    h = await withRules({
      resources: `rules:\n  lookahead:\n    given: "$.metadata.name"\n    then: { function: pattern, functionOptions: { match: "^(?=p)" } }\n`,
    });
    const r = await spawnCli(["validate", "--config", path.join(h.dir, "gatesync.yaml")], { env: { ...h.env, ...silent } });
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(
      /error\[CONFIG_INVALID\] \S*rules\/resources\.spectral\.yaml:4:\d+ rules\.lookahead\.then\.functionOptions\.match: ruleset: the pattern "\^\(\?=p\)" is not accepted: .*`\(\?=`/,
    );
  });

  it("a one-shot validate stops a rule that backtracks past the document's budget: a RULE_TIMEOUT naming the rule and the document", async () => {
    const rule = `rules:\n  title-words:\n    given: "$.info"\n    severity: error\n    then: { field: title, function: schema, functionOptions: { schema: { type: string, pattern: ${JSON.stringify(backtracking)} } } }\n`;
    h = await withRules({ openapi: rule }, "documentTimeout: 2s");
    await titled(h.dir, stuckValue);
    const started = Date.now();
    const r = await spawnCli(["validate", "--config", path.join(h.dir, "gatesync.yaml")], { env: { ...h.env, ...silent } });
    const took = Date.now() - started;
    expect(r.code).toBe(1);
    expect(r.stdout).toMatch(
      /error\[RULE_TIMEOUT title-words\] openapi\/petstore\.yaml:1:1 ApiDefinition\/petstore: the rule title-words did not finish within 2 s on this document and was stopped/,
    );
    // the budget, the start of the process and the rest of the run: far from never
    expect(took).toBeLessThan(25_000);
  });

  it("following RULE_TIMEOUT's hint — a larger rules.documentTimeout — lets a slow but finite rule finish", async () => {
    const rule = `rules:\n  title-words:\n    given: "$.info"\n    severity: error\n    then: { field: title, function: schema, functionOptions: { schema: { type: string, pattern: ${JSON.stringify(backtracking)} } } }\n`;
    h = await withRules({ openapi: rule }, "documentTimeout: 50ms");
    // backtracks for a second or so: past 50 ms, well within a minute
    await titled(h.dir, `${"a".repeat(24)}!`);
    const config = path.join(h.dir, "gatesync.yaml");
    const stopped = await spawnCli(["validate", "--config", config], { env: { ...h.env, ...silent } });
    expect(stopped.stdout).toContain("error[RULE_TIMEOUT title-words]");
    expect(stopped.stdout).toContain("raise rules.documentTimeout in gatesync.yaml");
    await writeFile(config, (await readFile(config, "utf8")).replace("documentTimeout: 50ms", "documentTimeout: 60s"));
    const finished = await spawnCli(["validate", "--config", config], { env: { ...h.env, ...silent } });
    expect(finished.stdout).not.toContain("RULE_TIMEOUT");
    expect(finished.stdout).toContain("error[RULESET_VIOLATION title-words]");
  });

  it("a daemon refuses the commit whose rule runs past its budget, keeps the last good one, and applies the fixed commit at once", async () => {
    const rule = `rules:\n  listen-path-words:\n    given: "$.spec.query.listenPath"\n    severity: error\n    then: { function: schema, functionOptions: { schema: { type: string, pattern: "^/([a-z0-9]+/?)+$" } } }\n`;
    h = await withRules({ resources: rule }, "documentTimeout: 2s");
    const repo = path.join(h.dir, "config");
    git(repo, "init", "-q", "-b", "main");
    git(repo, "add", "-A");
    git(repo, "commit", "-q", "-m", "good");
    const good = git(repo, "rev-parse", "HEAD");
    const base = await h.config();
    const config = { ...base, source: { type: "git" as const, url: repo, branch: "main", subdirectory: ".", cacheDir: path.join(h.dir, "cache") } };
    daemon = await startDaemon({ config, env: h.env, logger: silentLogger(), listen: "127.0.0.1:0", state: h.state, watchConfig: false });
    const start = await daemon.reconciler.runOnce("start");
    expect(start.diagnostics ?? []).toEqual([]);
    expect(start.result).toBe("applied");

    const api = path.join(repo, "apis/petstore.yaml");
    const original = await readFile(api, "utf8");
    await writeFile(api, original.replace("listenPath: /petstore/", `listenPath: /${"a".repeat(40)}!`));
    git(repo, "commit", "-q", "-am", "a listen path the rule chokes on");
    const stuck = Date.now();
    const refused = await daemon.reconciler.runOnce("sync");
    expect(Date.now() - stuck).toBeLessThan(15_000);
    expect(refused.result).toBe("invalid");
    expect(refused.diagnostics).toContainEqual(
      expect.objectContaining({
        severity: "error",
        code: "RULE_TIMEOUT",
        rule: "listen-path-words",
        file: "apis/petstore.yaml",
        resource: "ApiDefinition/petstore",
      }),
    );
    expect(daemon.reconciler.lastGood?.commit).toBe(good);
    // a document stopped past its budget is not kept as checked: the same commit is linted again (the budget again)
    const again = Date.now();
    const retried = await daemon.reconciler.runOnce("sync");
    expect(Date.now() - again).toBeGreaterThanOrEqual(1_900);
    expect(retried.diagnostics).toContainEqual(expect.objectContaining({ code: "RULE_TIMEOUT", rule: "listen-path-words" }));

    await writeFile(api, original.replace("listenPath: /petstore/", "listenPath: /petstore/v2/"));
    git(repo, "commit", "-q", "-am", "fixed");
    const fixed = git(repo, "rev-parse", "HEAD");
    const next = Date.now();
    const applied = await daemon.reconciler.runOnce("sync");
    expect(applied.result).toBe("applied");
    expect(daemon.reconciler.lastGood?.commit).toBe(fixed);
    expect(Date.now() - next).toBeLessThan(10_000);
  });

  it("/healthz fails while a validation runs past its limit (the run's rules budget, and as long again), and recovers after", async () => {
    // a 1 ms budget for the run: any validation outlasts its limit of 2 ms, and each document is a RULE_TIMEOUT
    h = await withRules({ resources: "rules:\n  named:\n    given: $.metadata\n    then: { field: name, function: truthy }\n" }, "runTimeout: 1ms");
    daemon = await startDaemon({ config: await h.config(), env: h.env, logger: silentLogger(), listen: "127.0.0.1:0", state: h.state, watchConfig: false });
    const statuses = new Set<number>();
    let running = true;
    const run = daemon.reconciler.runOnce("start").finally(() => (running = false));
    while (running) {
      statuses.add((await fetch(`${daemon.url}/healthz`)).status);
      await new Promise((resolve) => setTimeout(resolve, 1));
    }
    const report = await run;
    expect(report.diagnostics).toContainEqual(
      expect.objectContaining({ code: "RULE_TIMEOUT", message: expect.stringContaining("the run's budget for rules (1 ms) was spent") as string }),
    );
    expect(statuses).toContain(503);
    const after = await fetch(`${daemon.url}/healthz`);
    expect(after.status).toBe(200);
  });
});
