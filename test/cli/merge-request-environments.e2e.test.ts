/**
 * The merge-request job `gatesync init` writes, on a repository with environments, against a
 * running daemon of two environments (issue 44): one run plans every environment the daemon
 * runs against its own state there, with the daemon's operator settings, and writes one
 * comment; what it shows per environment is what the daemon applies once the change is merged.
 */
import { execFile, execFileSync } from "node:child_process";
import { promisify } from "node:util";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { cliArgs, runCli } from "../helpers/cli.js";
import { git } from "../helpers/git-repo.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";
import { stateToken, twoEnvironments } from "../helpers/two-environments.js";
import type { TwoEnvironments } from "../helpers/two-environments.js";

let setup: TwoEnvironments;
let bin: string;

/** The repository's gatesync.yaml, whole, as the CLI uses it on a laptop; the daemon takes its team settings only. */
const repoSettings = (stagingRate: number): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ./config }
orphans: deactivate
environments:
  staging:
    targets: { gateway: { url: "http://127.0.0.1:8081", credentialEnv: GW_KEY } }
    values: { rate: ${stagingRate} }
  production:
    targets: { gateway: { url: "http://127.0.0.1:8082", credentialEnv: GW_KEY } }
    values: { rate: 20 }
    patches: [overlays/production.yaml]
  qa:
    targets: { gateway: { url: "http://127.0.0.1:8083", credentialEnv: GW_KEY } }
    values: { rate: 1 }
`;
const overlay = (rate: number): string => `apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: globex }\nspec: { rate: ${rate} }\n`;
const keys = [doc("OrgKey", "acme", "keyId: org-acme\nrate: ${var:rate}"), doc("OrgKey", "globex", "keyId: org-globex\nrate: 5")].join("---\n");

/** Runs the job's plan step in `dir` as the workflow does (the daemon answers in this process meanwhile); its exit code and comment. */
async function planJob(dir: string, env: Record<string, string>): Promise<{ code: number; comment: string; stderr: string }> {
  let code = 0;
  let stderr = "";
  try {
    await promisify(execFile)("bash", ["ci/plan-comment.sh", "gatesync.yaml", "config"], {
      cwd: dir,
      env: { PATH: `${bin}:${process.env.PATH ?? ""}`, HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1", ...env },
    });
  } catch (err) {
    code = (err as { code: number }).code;
    stderr = String((err as { stderr: string }).stderr);
  }
  const comment = path.join(dir, "comment.md");
  return { code, comment: existsSync(comment) ? await readFile(comment, "utf8") : "", stderr };
}

/** The calls of an interface that change something, after `from`. */
const writesSince = (s: SandboxHandle, from: number): string[] =>
  s.inspect
    .calls()
    .log.slice(from)
    .filter((c) => !c.internal && c.method !== "GET")
    .map((c) => c.path);

beforeAll(async () => {
  // the job's files, as `gatesync init` writes them
  const scaffold = await tempRepo();
  expect((await runCli(["init", scaffold])).code).toBe(0);
  const ci: Record<string, string> = {};
  for (const f of ["ci/plan-comment.sh", "ci/post-comment.mjs", ".github/workflows/gatesync-plan.yaml"]) ci[f] = await readFile(path.join(scaffold, f), "utf8");
  setup = await twoEnvironments({ ...ci, "config/keys.yaml": keys, "overlays/production.yaml": overlay(50), "gatesync.yaml": repoSettings(10) });
  expect((await setup.daemon.firstRun).result).toBe("applied");
  bin = path.join(await tempRepo(), "bin");
  await mkdir(bin);
  await writeFile(
    path.join(bin, "gatesync"),
    `#!/bin/sh\nexec "${process.execPath}" ${cliArgs()
      .map((a) => `"${a}"`)
      .join(" ")} "$@"\n`,
  );
  await chmod(path.join(bin, "gatesync"), 0o755);
}, 120_000);

afterAll(async () => {
  await setup?.stop();
  await removeTempRepos();
});

describe("the merge-request job on a repository with environments", () => {
  it("writes one comment of every environment the daemon runs, whose changes are what the daemon applies after the merge", async () => {
    const dir = path.join(await tempRepo(), "mr");
    execFileSync("git", ["clone", "-q", setup.origin, dir]);
    git(dir, "checkout", "-q", "-b", "promote");
    await writeFile(path.join(dir, "gatesync.yaml"), repoSettings(15));
    await writeFile(path.join(dir, "overlays/production.yaml"), overlay(70));
    git(dir, "commit", "-qam", "staging rate 15, production globex 70");
    const job = await planJob(dir, { CI: "true", GATESYNC_STATE_URL: setup.daemon.url!, GATESYNC_STATE_TOKEN: stateToken });
    expect(job.code, job.stderr + job.comment).toBe(2);
    // one comment: both environments, under one heading; qa is the repository's, not the daemon's
    expect(job.comment.match(/^### gatesync plan$/gm)).toHaveLength(1);
    expect(job.comment).toContain("#### Environment `staging`");
    expect(job.comment).toContain("#### Environment `production`");
    expect(job.comment).not.toContain("#### Environment `qa`");
    expect(job.comment).toContain("the daemon does not run `qa`: it is not planned");
    const plan = JSON.parse(await readFile(path.join(dir, "plan.json"), "utf8")) as {
      environments: Record<string, { state: { source: string }; changes: Array<{ id: string; action: string }> }>;
    };
    const planned = Object.fromEntries(
      Object.entries(plan.environments).map(([name, p]) => [name, p.changes.filter((c) => c.action !== "no-op").map((c) => c.id)]),
    );
    expect(planned).toEqual({ staging: ["OrgKey/acme"], production: ["OrgKey/globex"] });
    expect(plan.environments.production!.state.source).toBe(`the daemon's state at ${setup.daemon.url}/environments/production/state`);
    // the merge: what the daemon applies in each environment is what the comment showed
    const before = { staging: setup.staging.inspect.calls().log.length, production: setup.production.inspect.calls().log.length };
    git(dir, "push", "-q", "origin", "promote:main");
    await setup.syncTo(git(dir, "rev-parse", "HEAD"));
    const keyOf: Record<string, string> = { "OrgKey/acme": "org-acme", "OrgKey/globex": "org-globex" };
    const applied = {
      staging: writesSince(setup.staging, before.staging),
      production: writesSince(setup.production, before.production),
    };
    for (const name of ["staging", "production"] as const) {
      expect(applied[name]).toHaveLength(planned[name]!.length);
      planned[name]!.forEach((id, i) => expect(applied[name][i]).toContain(keyOf[id]));
    }
    expect(setup.staging.inspect.store.orgKeys.get("org-acme")?.session.rate).toBe(15);
    expect(setup.production.inspect.store.orgKeys.get("org-globex")?.session.rate).toBe(70);
  }, 90_000);

  it("says in the comment that the daemon's settings could not be read, and plans nothing from local ones", async () => {
    const dir = path.join(await tempRepo(), "mr");
    execFileSync("git", ["clone", "-q", setup.origin, dir]);
    const job = await planJob(dir, { CI: "true", GATESYNC_STATE_URL: setup.daemon.url!, GATESYNC_STATE_TOKEN: "not-the-token" });
    expect(job.code).toBe(1);
    expect(job.comment).toContain("### gatesync plan: the daemon's state could not be used, so no plan was made");
    expect(job.comment).toContain(
      `error[STATE_UNREACHABLE] cannot read the daemon's operator settings from ${setup.daemon.url}/config: the token was refused (401)`,
    );
    expect(job.comment).not.toContain("not-the-token");
    expect(existsSync(path.join(dir, "plan.json"))).toBe(false);
  }, 60_000);
});
