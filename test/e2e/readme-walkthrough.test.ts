/**
 * Follows the README as a new user would: a fresh clone, `npm start -- --once`, then
 * `gatesync init` in an empty directory, validate, plan and apply into `gatesync sandbox`
 * started as a child process. The clone gets this checkout's node_modules by symlink and is
 * built with `npm run build` (what `npm install`'s `prepare` does: tsc, then the bundle): `npm ci`
 * itself is what `.ci/run` runs on every CI build, so it is not repeated here. The clone is of
 * the committed HEAD (uncommitted edits are not in it).
 */
import { execFile, spawn } from "node:child_process";
import { existsSync } from "node:fs";
import { cp, mkdir, mkdtemp, readFile, rm, symlink, writeFile } from "node:fs/promises";
import { tmpdir } from "node:os";
import path from "node:path";
import { promisify } from "node:util";
import { afterAll, describe, expect, it } from "vitest";
import { projectRoot } from "../helpers/temp-repo.js";

const run = promisify(execFile);
const cleanup: (() => Promise<void>)[] = [];
afterAll(async () => {
  for (const c of cleanup.reverse()) await c();
});

interface Result {
  readonly code: number;
  readonly stdout: string;
  readonly stderr: string;
}

/** Runs a command to its end (bounded), never throwing on a non-zero exit. */
async function sh(cmd: string, args: string[], cwd: string, env: NodeJS.ProcessEnv = {}, timeout = 120_000): Promise<Result> {
  try {
    const r = await run(cmd, args, { cwd, env: { ...process.env, NO_COLOR: "1", ...env }, timeout, maxBuffer: 32 * 1024 * 1024 });
    return { code: 0, stdout: r.stdout, stderr: r.stderr };
  } catch (err) {
    const e = err as { code?: unknown; stdout?: string; stderr?: string };
    return { code: typeof e.code === "number" ? e.code : -1, stdout: e.stdout ?? "", stderr: `${e.stderr ?? ""}${String(err)}` };
  }
}

/** A fresh clone of this repository (or, outside a git checkout, a copy of its tracked tree). */
async function freshClone(root: string): Promise<string> {
  const clone = path.join(root, "gatesync");
  if (existsSync(path.join(projectRoot, ".git"))) {
    const r = await sh("git", ["clone", "--quiet", projectRoot, clone], root);
    expect(r.code, r.stderr).toBe(0);
  } else {
    await cp(projectRoot, clone, { recursive: true, filter: (src) => !/[/\\](node_modules|dist|\.git)$/.test(src) });
  }
  await symlink(path.join(projectRoot, "node_modules"), path.join(clone, "node_modules"), "dir");
  const built = await sh("npm", ["run", "build"], clone, {}, 300_000);
  expect(built.code, built.stdout + built.stderr).toBe(0);
  return clone;
}

/** `gatesync sandbox` as a child process on a free port; resolves with its address once it listens. */
function startSandbox(gatesync: string, cwd: string, env: NodeJS.ProcessEnv): Promise<{ url: string; stop: () => Promise<void> }> {
  const child = spawn(process.execPath, [gatesync, "sandbox", "--port", "0", "--fixtures", "sandbox-fixtures.yaml"], {
    cwd,
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "pipe"],
  });
  const closed = new Promise<void>((resolve) => child.on("close", () => resolve()));
  const stop = async (): Promise<void> => {
    child.kill("SIGTERM");
    await closed;
  };
  cleanup.push(stop);
  let out = "";
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => reject(new Error(`sandbox did not start:\n${out}`)), 30_000);
    child.stderr.on("data", (b: Buffer) => (out += b.toString()));
    child.stdout.on("data", (b: Buffer) => {
      out += b.toString();
      const m = /sandbox listening on (http:\/\/127\.0\.0\.1:\d+)/.exec(out);
      if (m?.[1] === undefined) return;
      clearTimeout(timer);
      resolve({ url: m[1], stop });
    });
    void closed.then(() => reject(new Error(`sandbox exited:\n${out}`)));
  });
}

const credentials = { GW_ADMIN_KEY: "e2e-gateway-key", PORTAL_API_KEY: "e2e-portal-key", DASHBOARD_TOKEN: "e2e-dashboard-token", LLM_API_KEY: "e2e-llm-key" };

describe("the README, as written", () => {
  it("fresh clone → npm start -- --once → gatesync init → validate → plan → apply into gatesync sandbox", async () => {
    const root = await mkdtemp(path.join(tmpdir(), "gatesync-e2e-"));
    cleanup.push(() => rm(root, { recursive: true, force: true }));
    const clone = await freshClone(root);
    const gatesync = path.join(clone, "bin/gatesync.js");

    const demo = await sh("npm", ["start", "--", "--once"], clone);
    expect(demo.code, demo.stdout + demo.stderr).toBe(0);
    expect(demo.stdout).toContain("Apply: 17 applied, 0 failed");

    const repo = path.join(root, "my-gateway-config");
    await mkdir(repo);
    const init = await sh(process.execPath, [gatesync, "init"], repo);
    expect(init.code, init.stderr).toBe(0);
    const validate = await sh(process.execPath, [gatesync, "validate"], repo);
    expect(validate.code, validate.stdout + validate.stderr).toBe(0);
    expect(validate.stdout).toContain("valid: 8 resources in 8 files");

    // README: `gatesync sandbox --fixtures sandbox-fixtures.yaml` listens on 8080, which the
    // scaffold's gatesync.yaml names; here on a free port, so the URLs are pointed at it
    const sandbox = await startSandbox(gatesync, repo, credentials);
    const config = path.join(repo, "gatesync.yaml");
    await writeFile(config, (await readFile(config, "utf8")).replaceAll("http://127.0.0.1:8080", sandbox.url));

    const plan = await sh(process.execPath, [gatesync, "plan", "--detailed-exitcode"], repo, credentials);
    expect(plan.code, plan.stdout + plan.stderr).toBe(2);
    expect(plan.stdout).toContain("Plan: 5 to create, 3 to update, 0 blocked");
    // the README's first apply: `apply --auto-approve` alone is refused on the new, empty state, and says what to do
    const refused = await sh(process.execPath, [gatesync, "apply", "--auto-approve"], repo, credentials);
    expect(refused.code, refused.stdout + refused.stderr).toBe(1);
    expect(refused.stderr).toContain("error[STATE_EMPTY]");
    expect(refused.stderr).toContain("if nothing was ever applied from this repository, pass --allow-empty-state");
    const apply = await sh(process.execPath, [gatesync, "apply", "--auto-approve", "--allow-empty-state"], repo, credentials);
    expect(apply.code, apply.stdout + apply.stderr).toBe(0);
    expect(apply.stdout).toContain("Apply: 8 applied, 0 failed, 0 in doubt, 0 blocked");
    const again = await sh(process.execPath, [gatesync, "plan", "--detailed-exitcode"], repo, credentials);
    expect(again.code, again.stdout + again.stderr).toBe(0);
    expect(again.stdout).toContain("8 unchanged");

    // every kind reached the sandbox
    const objects = JSON.stringify(await (await fetch(`${sandbox.url}/__sandbox/objects`)).json());
    for (const written of [
      '"operationId":"listPets"',
      '"redirect_uri":"https://shop.example.com/oauth/callback"',
      '"alias":"ACME Corp"',
      '"GrantType":"authorization_code,refresh_token"',
      '"DisplayName":"Storefront APIs"',
      '"Events":["UserRegistered"]',
      '"name":"alerts-to-chat"',
      '"model_name":"support-large"',
    ])
      expect(objects).toContain(written);
    await sandbox.stop();
  }, 420_000);
});
