/**
 * The merge-request job `gatesync init` writes, run as CI runs it: in a fresh `git clone` of
 * the repository (no state file), with `ci/plan-comment.sh`, against a running daemon's state
 * read through its `GET /state`. The plan shows only the merge request's change; with no state
 * it fails loudly in CI; the empty state is always said in the header.
 */
import { execFileSync } from "node:child_process";
import { existsSync } from "node:fs";
import { chmod, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { parse } from "yaml";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { checkFixtures } from "../../src/sandbox/fixtures.js";
import { startSandbox } from "../../src/sandbox/sandbox.js";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { cliArgs, runCli } from "../helpers/cli.js";
import type { DaemonProcess } from "../helpers/daemon-process.js";
import { spawnDaemon } from "../helpers/daemon-process.js";
import { eventually } from "../helpers/eventually.js";
import { git } from "../helpers/git-repo.js";
import { call, testCredentials } from "../helpers/sandbox.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const stateToken = "mr-plan-state-token-7d1e";
const hmac = "acme-hmac-secret-value-42";
const auditToken = "audit-hook-token-value-9f3";
let sandbox: SandboxHandle;
let origin: string;
let daemon: DaemonProcess;
let bin: string;

/** The scaffold's credential variables, holding the sandbox's credentials. */
const credentials = {
  GW_ADMIN_KEY: testCredentials.gatewayKey,
  PORTAL_API_KEY: testCredentials.portalKey,
  DASHBOARD_TOKEN: testCredentials.dashboardToken,
  LLM_API_KEY: testCredentials.llmKey,
};

/** Runs the job's script in `dir` with the variables the workflow sets; resolves to its exit code and the comment. */
function planJob(dir: string, env: Record<string, string>, ...flags: string[]): { code: number; comment: string } {
  let code = 0;
  try {
    execFileSync("bash", ["ci/plan-comment.sh", "gatesync.yaml", "config", ...flags], {
      cwd: dir,
      env: { PATH: `${bin}:${process.env.PATH ?? ""}`, HOME: process.env.HOME ?? "/tmp", NO_COLOR: "1", ...env },
      stdio: "pipe",
    });
  } catch (err) {
    code = (err as { status: number }).status;
  }
  return { code, comment: existsSync(path.join(dir, "comment.md")) ? execFileSync("cat", [path.join(dir, "comment.md")], { encoding: "utf8" }) : "" };
}

/** A fresh clone of the repository with the merge request's change on a branch, as the CI job sees it. */
async function mergeRequestClone(): Promise<string> {
  const dir = path.join(await tempRepo(), "mr");
  execFileSync("git", ["clone", "-q", origin, dir]);
  git(dir, "checkout", "-q", "-b", "raise-acme-rate");
  const file = path.join(dir, "config/org-key.yaml");
  await writeFile(file, (await readFile(file, "utf8")).replace("rate: 1000", "rate: 2000"));
  git(dir, "commit", "-qam", "acme: rate 2000");
  return dir;
}

/** The secrets directory as the job's GATESYNC_PLAN_SECRET_FILES carries it. */
async function secretFilesVariable(): Promise<string> {
  const dir = await tempRepo({ "secrets/acme-hmac.txt": hmac });
  return execFileSync("sh", ["-c", "tar czf - secrets | base64 -w0"], { cwd: dir, encoding: "utf8" });
}

beforeAll(async () => {
  // `gatesync init`, pointed at this sandbox, with a ${file:} secret: the team's repository
  const work = await tempRepo();
  expect((await runCli(["init", work])).code).toBe(0);
  sandbox = await startSandbox({
    credentials: testCredentials,
    fixtures: checkFixtures(parse(await readFile(path.join(work, "sandbox-fixtures.yaml"), "utf8"))),
  });
  const targets = [sandbox.urls.gateway, sandbox.urls.portal, sandbox.urls.dashboard, sandbox.urls.llm];
  let n = 0;
  const config = (await readFile(path.join(work, "gatesync.yaml"), "utf8"))
    .replace(/url: http:\/\/127\.0\.0\.1:8080\S*/g, () => `url: ${targets[n++]}`)
    .replace("server:\n", 'server:\n  listen: "127.0.0.1:0"\n')
    .replace("env: []", "env: [AUDIT_HOOK_TOKEN]");
  await writeFile(path.join(work, "gatesync.yaml"), config);
  const key = path.join(work, "config/org-key.yaml");
  await writeFile(key, `${await readFile(key, "utf8")}  hmac_string: \${file:acme-hmac.txt}\n`);
  const hook = path.join(work, "config/portal-webhook.yaml");
  await writeFile(
    hook,
    (await readFile(hook, "utf8")).replace(
      "URL: https://audit.example.com/portal-events",
      "URL: https://audit.example.com/portal-events?token=${env:AUDIT_HOOK_TOKEN}",
    ),
  );
  await writeFile(path.join(work, ".gitignore"), ".gatesync/\nsecrets/*\n!secrets/.gitkeep\n");
  git(work, "init", "-q", "-b", "main");
  git(work, "add", "-A");
  git(work, "commit", "-qm", "scaffold");
  origin = path.join(await tempRepo(), "origin.git");
  execFileSync("git", ["clone", "-q", "--bare", work, origin]);
  // the daemon: its own checkout of main, its secret file, its SQLite state
  const deployed = path.join(await tempRepo(), "deployed");
  execFileSync("git", ["clone", "-q", origin, deployed]);
  await writeFile(path.join(deployed, "secrets/acme-hmac.txt"), hmac);
  daemon = await spawnDaemon("gatesync.yaml", deployed, { ...credentials, GATESYNC_STATE_TOKEN: stateToken, AUDIT_HOOK_TOKEN: auditToken });
  await eventually(
    () => call(`${daemon.url}/status`).then((r) => r.body as { synced: boolean; lastRun: { result: string } | null }),
    (s) => s.synced,
    60_000,
    () => daemon.output().slice(-3000),
  );
  // `gatesync` on PATH, as the job installs it
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
  daemon?.child.kill("SIGTERM");
  await sandbox?.stop();
  await removeTempRepos();
});

describe("the merge-request plan job on a fresh clone", () => {
  it("plans against the daemon's state: only the merge request's change, the state named in the header", async () => {
    const dir = await mergeRequestClone();
    const job = planJob(dir, {
      CI: "true",
      GATESYNC_STATE_URL: daemon.url,
      GATESYNC_STATE_TOKEN: stateToken,
      GATESYNC_PLAN_ENV: `# the plan's secrets\nAUDIT_HOOK_TOKEN=${auditToken}\n`,
      GATESYNC_PLAN_SECRET_FILES: await secretFilesVariable(),
    });
    expect(job.code, job.comment).toBe(2);
    const plan = JSON.parse(await readFile(path.join(dir, "plan.json"), "utf8")) as {
      state: { serial: number; source: string; empty?: boolean };
      summary: Record<string, number>;
      changes: Array<{ id: string; action: string; fields: Array<{ path: string }> }>;
    };
    expect(plan.summary).toMatchObject({ create: 0, update: 1, orphan: 0, blocked: 0 });
    const changed = plan.changes.filter((c) => c.action !== "no-op");
    expect(changed.map((c) => c.id)).toEqual(["OrgKey/acme"]);
    // the ${file:} secret resolved to what the daemon applied: only the rate changed
    expect(changed[0]!.fields.map((f) => f.path)).toEqual(["rate"]);
    expect(plan.state.serial).toBeGreaterThan(0);
    expect(plan.state.empty).toBeUndefined();
    expect(plan.state.source).toBe(`the daemon's state at ${daemon.url}/state`);
    expect(job.comment).toContain(`state serial ${plan.state.serial}, the daemon's state at ${daemon.url}/state`);
    expect(job.comment).not.toContain("The state is empty");
    expect(job.comment).not.toContain(hmac);
    expect(job.comment).not.toContain(auditToken);
    expect(job.comment).not.toContain(stateToken);
    // the clone is left without a state file: nothing was created
    expect(existsSync(path.join(dir, ".gatesync"))).toBe(false);
  }, 60_000);

  it("with no state to plan against, fails loudly in CI, and says how to plan against the daemon's", async () => {
    const dir = await mergeRequestClone();
    const job = planJob(dir, { CI: "true", GATESYNC_PLAN_ENV: `AUDIT_HOOK_TOKEN=${auditToken}`, GATESYNC_PLAN_SECRET_FILES: await secretFilesVariable() });
    expect(job.code).toBe(1);
    expect(job.comment).toContain("### gatesync plan: the daemon's state could not be used, so no plan was made");
    expect(job.comment).toMatch(
      /error\[STATE_EMPTY\] the state this plan would be computed against is empty \(sqlite \S+\.gatesync\/state\.db \(does not exist\)\) and this runs in CI/,
    );
    expect(job.comment).toContain("set GATESYNC_STATE_URL to the daemon's address and GATESYNC_STATE_TOKEN");
    expect(job.comment).toContain("pass --allow-empty-state");
    expect(existsSync(path.join(dir, ".gatesync"))).toBe(false);
    expect(existsSync(path.join(dir, "plan.json"))).toBe(false);
    // following the hint for a repository nothing was applied from: the plan, with the empty state said loudly
    const allowed = planJob(
      dir,
      { CI: "true", GATESYNC_PLAN_ENV: `AUDIT_HOOK_TOKEN=${auditToken}`, GATESYNC_PLAN_SECRET_FILES: await secretFilesVariable() },
      "--allow-empty-state",
    );
    expect(allowed.code).toBe(2);
    expect(allowed.comment).toContain("**⚠ The state is empty (never written, or absent as in a fresh clone): every resource is planned as a create.");
    const plan = JSON.parse(await readFile(path.join(dir, "plan.json"), "utf8")) as {
      state: { serial: number; empty?: boolean };
      summary: { create: number; update: number; noop: number };
    };
    expect(plan.state).toMatchObject({ serial: 0, empty: true });
    // every resource is a change (creates; updates of the kinds that exist already on the servers)
    expect(plan.summary).toMatchObject({ create: 5, update: 3, noop: 0 });
  }, 60_000);

  it("a wrong token or an unreachable daemon fails the job with the reason, never a plan from nothing", async () => {
    const dir = await mergeRequestClone();
    const wrong = planJob(dir, {
      CI: "true",
      GATESYNC_STATE_URL: daemon.url,
      GATESYNC_STATE_TOKEN: "not-the-token",
      GATESYNC_PLAN_SECRET_FILES: await secretFilesVariable(),
    });
    expect(wrong.code).toBe(1);
    // the daemon's operator settings are read first, with the same token
    expect(wrong.comment).toContain(
      `error[STATE_UNREACHABLE] cannot read the daemon's operator settings from ${daemon.url}/config: the token was refused (401)`,
    );
    expect(wrong.comment).not.toContain("not-the-token");
    const gone = planJob(dir, {
      CI: "true",
      GATESYNC_STATE_URL: "http://127.0.0.1:1",
      GATESYNC_STATE_TOKEN: stateToken,
      GATESYNC_PLAN_SECRET_FILES: await secretFilesVariable(),
    });
    expect(gone.code).toBe(1);
    expect(gone.comment).toContain("error[STATE_UNREACHABLE] cannot read the daemon's operator settings from http://127.0.0.1:1/config");
  }, 60_000);

  it("off CI, a plan against an empty state still works but says so in the header", async () => {
    const dir = await mergeRequestClone();
    await writeFile(path.join(dir, "secrets/acme-hmac.txt"), hmac);
    const r = await runCli(["plan", "--config", path.join(dir, "gatesync.yaml")], { ...credentials, AUDIT_HOOK_TOKEN: auditToken, NO_COLOR: "1" });
    expect(r.code, r.stderr).toBe(0);
    expect(r.stdout).toMatch(/^gatesync plan \(state serial 0, sqlite \S+ \(does not exist\)\)\n⚠ The state is empty/);
  });

  it("the CI job init writes uses the scaffold's own variables: the state's address and token, the plan's secrets; no DATABASE_URL, no example's secret", async () => {
    const dir = await tempRepo();
    await runCli(["init", dir]);
    const workflow = await readFile(path.join(dir, ".github/workflows/gatesync-plan.yaml"), "utf8");
    const env = (parse(workflow) as { jobs: { plan: { env: Record<string, string> } } }).jobs.plan.env;
    expect(Object.keys(env).sort()).toEqual(["GATESYNC_PLAN_ENV", "GATESYNC_PLAN_SECRET_FILES", "GATESYNC_STATE_TOKEN", "GATESYNC_STATE_URL"]);
    expect(workflow).not.toMatch(/DATABASE_URL|PETSTORE|CRM_HOOK|CHAT_WEBHOOK/);
    // the token the job sends is the one the scaffold's daemon checks
    expect(await readFile(path.join(dir, "gatesync.yaml"), "utf8")).toContain("stateTokenEnv: GATESYNC_STATE_TOKEN");
    expect(await readFile(path.join(dir, "ci/plan-comment.sh"), "utf8")).toContain("GATESYNC_PLAN_SECRET_FILES");
    // the GitLab job of examples/ci reads the same variables
    const gitlab = await readFile(path.join(projectRoot, "examples/ci/gitlab-ci-plan.yaml"), "utf8");
    expect(gitlab).not.toMatch(/DATABASE_URL|PETSTORE|CRM_HOOK|CHAT_WEBHOOK/);
    for (const name of ["GATESYNC_STATE_URL", "GATESYNC_STATE_TOKEN", "GATESYNC_PLAN_ENV", "GATESYNC_PLAN_SECRET_FILES"]) expect(gitlab).toContain(name);
    expect((parse(gitlab) as { "gatesync-plan": { script: string[] } })["gatesync-plan"].script.join("\n")).toContain(
      "bash ci/plan-comment.sh gatesync.yaml config",
    );
  });

  it("a GATESYNC_PLAN_ENV line that is not NAME=value is named by its number, never shown", async () => {
    const dir = await mergeRequestClone();
    const job = planJob(dir, {
      CI: "true",
      GATESYNC_STATE_URL: daemon.url,
      GATESYNC_STATE_TOKEN: stateToken,
      GATESYNC_PLAN_ENV: `AUDIT_HOOK_TOKEN=${auditToken}\n${auditToken}`,
    });
    let stderr = "";
    try {
      execFileSync("bash", ["ci/plan-comment.sh", "gatesync.yaml", "config"], {
        cwd: dir,
        env: { PATH: `${bin}:${process.env.PATH ?? ""}`, GATESYNC_PLAN_ENV: `AUDIT_HOOK_TOKEN=${auditToken}\n${auditToken}` },
        stdio: "pipe",
      });
    } catch (err) {
      stderr = String((err as { stderr: Buffer }).stderr);
    }
    expect(job.code).toBe(1);
    expect(stderr).toBe("GATESYNC_PLAN_ENV line 2 is not NAME=value\n");
    expect(existsSync(path.join(dir, "plan.json"))).toBe(false);
  });
});
