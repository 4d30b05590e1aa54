/**
 * The packed package installs like any CLI: `npm pack` (its prepack builds dist/), then an
 * install of the tarball into an empty directory from npm's cache (--offline, pinned to our lock's
 * versions by scripts/pack/offline-lock.ts: a fresh cache holds no registry documents), production
 * dependencies only — no TypeScript, no build, no install script waiting for approval — and the
 * commands a team runs work from it: --version, validate, plan and run (a PostgreSQL state: the
 * SQLite driver is an optional peer, and without it a SQLite state says how to add it).
 */
import { execFileSync, spawn, spawnSync } from "node:child_process";
import { existsSync, readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import type { SandboxHandle } from "../../src/sandbox/sandbox.js";
import { writeOfflineLock } from "../../scripts/pack/offline-lock.js";
import { pgUrl, testSchema } from "../helpers/postgres.js";
import { doc } from "../helpers/resources.js";
import { testCredentials, testSandbox } from "../helpers/sandbox.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

let dir: string;
let install: { stdout: string; stderr: string };
let sandbox: SandboxHandle;

const npm = (cwd: string, ...args: string[]) => {
  const r = spawnSync("npm", args, { cwd, encoding: "utf8", env: { ...process.env, npm_config_update_notifier: "false" } });
  if (r.status !== 0) throw new Error(`npm ${args.join(" ")}: ${r.status}\n${r.stderr}`);
  return r;
};

beforeAll(async () => {
  const out = await tempRepo();
  const packed = npm(projectRoot, "pack", "--pack-destination", out, "--json");
  const tarball = path.join(out, (JSON.parse(packed.stdout) as Array<{ filename: string }>)[0]!.filename);
  // the pack left package.json as it was (postpack), `prepare` and all
  expect((JSON.parse(readFileSync(path.join(projectRoot, "package.json"), "utf8")) as { scripts: Record<string, string> }).scripts.prepare).toBe(
    "npm run build",
  );
  dir = await tempRepo();
  // as the README says: the team's package.json, @scarf/scarf's telemetry script (a Spectral dependency's) denied
  npm(dir, "init", "-y");
  npm(dir, "pkg", "set", "allowScripts.@scarf/scarf=false", "--json");
  // npm ci cached tarballs, not the registry's package documents: pin the offline install to our lock's versions
  writeOfflineLock(dir);
  install = npm(dir, "install", "--offline", "--omit=dev", "--no-audit", "--no-fund", tarball);
  sandbox = await testSandbox();
}, 600_000);
afterAll(async () => {
  await sandbox?.stop();
  await removeTempRepos();
});

/** `npx gatesync ARGS` in the install's directory — asynchronously: the sandbox answers from this process. */
const gatesync = (env: Record<string, string>, ...args: string[]): Promise<{ status: number; stdout: string; stderr: string }> =>
  new Promise((resolve, reject) => {
    const child = spawn("npx", ["--no-install", "gatesync", ...args], { cwd: dir, env: { ...process.env, NO_COLOR: "1", CI: "", ...env } });
    let stdout = "";
    let stderr = "";
    child.stdout.on("data", (b: Buffer) => (stdout += b.toString()));
    child.stderr.on("data", (b: Buffer) => (stderr += b.toString()));
    child.on("error", reject);
    child.on("close", (code) => resolve({ status: code ?? 1, stdout, stderr }));
  });

describe("gatesync installed from its packed tarball", () => {
  it("installs production dependencies only, built, with no install script waiting for approval", () => {
    expect(install.stderr).not.toMatch(/install-scripts|allowScripts/);
    const root = path.join(dir, "node_modules");
    for (const dev of ["typescript", "esbuild", "tsx", "vitest", "better-sqlite3"]) expect(existsSync(path.join(root, dev)), dev).toBe(false);
    const pkg = JSON.parse(readFileSync(path.join(root, "gatesync/package.json"), "utf8")) as { scripts: Record<string, string> };
    expect(pkg.scripts.prepare).toBeUndefined();
    expect(existsSync(path.join(root, "gatesync/dist/bundle/cli.cjs"))).toBe(true);
    expect(execFileSync("npx", ["--no-install", "gatesync", "--version"], { cwd: dir, encoding: "utf8" }).trim()).toBe(
      (JSON.parse(readFileSync(path.join(projectRoot, "package.json"), "utf8")) as { version: string }).version,
    );
  });

  it("validates, plans and runs (PostgreSQL state); a SQLite state says how to add its driver", async () => {
    const repo = await tempRepo({ "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme-pack\nrate: 10\nper: 60") });
    const config = (state: string): string => `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { directory: ${path.join(repo, "config")} }
targets:
  gateway: { url: ${sandbox.urls.gateway}, credentialEnv: GW_KEY }
state: ${state}
`;
    writeFileSync(path.join(dir, "gatesync.yaml"), config(`{ backend: postgres, urlEnv: DATABASE_URL, schema: ${testSchema()} }`));
    const env = { GW_KEY: testCredentials.gatewayKey, DATABASE_URL: pgUrl };
    const valid = await gatesync(env, "validate", path.join(repo, "config"));
    expect(valid.status, valid.stderr).toBe(0);
    const plan = await gatesync(env, "plan", "--detailed-exitcode");
    expect(plan.status, plan.stderr).toBe(2);
    expect(plan.stdout).toContain("OrgKey/acme");
    const run = await gatesync(env, "run", "--once");
    expect(run.status, run.stdout + run.stderr).toBe(0);
    expect((await gatesync(env, "plan", "--detailed-exitcode")).status).toBe(0);

    writeFileSync(path.join(dir, "gatesync.yaml"), config("{ backend: sqlite, path: .gatesync/state.db }"));
    // a plan of a state never written opens no file; the first apply creates it, and needs the driver
    const sqlite = await gatesync(env, "apply", "--auto-approve", "--allow-empty-state");
    expect(sqlite.status, sqlite.stdout + sqlite.stderr).not.toBe(0);
    expect(sqlite.stderr).toContain("error[STATE_SQLITE_MISSING]");
    expect(sqlite.stderr).toContain("npm install better-sqlite3");
  }, 120_000);
});
