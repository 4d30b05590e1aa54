import { execFileSync } from "node:child_process";
import { readFileSync } from "node:fs";
import { chmod } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { runCli, spawnCli } from "../helpers/cli.js";
import { committedRepo, gitSourceConfig } from "../helpers/git-repo.js";
import { doc } from "../helpers/plan.js";
import { positionOf, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const broken = doc("OrgKey", "acme", "keyId: org-acme\nrate: fast");

describe("gatesync validate without DIR", () => {
  it("fetches a git source as plan does and reports its errors, located", async () => {
    const origin = await committedRepo({ "config/keys.yaml": broken });
    const work = await tempRepo();
    const cfg = await tempRepo({ "gatesync.yaml": gitSourceConfig(origin.dir, path.join(work, "cache")) });
    const r = await runCli(["validate", "--config", path.join(cfg, "gatesync.yaml")]);
    const at = positionOf(broken, "fast");
    // named from the repository's root, as --format github names it
    expect(r.stdout).toContain(`error[SCHEMA_VIOLATION] config/keys.yaml:${at.line}:${at.column} OrgKey/acme spec.rate`);
    expect(r.code).toBe(1);
  });

  it("says what to do, with exit 1, when there is neither DIR nor gatesync.yaml", async () => {
    const empty = await tempRepo();
    const r = await spawnCli(["validate"], { cwd: empty });
    expect(r.code).toBe(1);
    expect(r.stderr).toContain("error[USAGE] no directory to validate");
    expect(r.stderr).toContain("gatesync validate config/");
  });
});

describe("gatesync validate --format github|gitlab", () => {
  const files = { "config/keys.yaml": broken, "config/ok.yaml": doc("OrgKey", "ok", "keyId: org-ok\nrate: 5") };

  it("writes GitHub workflow commands naming the file from the repository's root, line and column", async () => {
    const repo = await tempRepo(files);
    const r = await spawnCli(["validate", "config", "--format", "github"], { cwd: repo });
    expect(r.code).toBe(1);
    const at = positionOf(broken, "fast");
    expect(r.stdout).toMatch(
      new RegExp(`^::error file=config/keys\\.yaml,line=${at.line},col=${at.column},title=gatesync SCHEMA_VIOLATION::OrgKey/acme spec\\.rate: must be`, "m"),
    );
    expect(r.stdout).toContain("gatesync validate: 1 error(s), 0 warning(s)");
  });

  it("names the file in text and JSON output exactly as in the annotations: from the repository's root", async () => {
    const repo = await tempRepo(files);
    const at = positionOf(broken, "fast");
    const text = await spawnCli(["validate", "config"], { cwd: repo });
    expect(text.stdout).toContain(`error[SCHEMA_VIOLATION] config/keys.yaml:${at.line}:${at.column} OrgKey/acme spec.rate`);
    const json = JSON.parse((await spawnCli(["validate", "config", "--format", "json"], { cwd: repo })).stdout) as { diagnostics: Array<{ file: string }> };
    expect(json.diagnostics.map((d) => d.file)).toEqual(["config/keys.yaml"]);
    // from a sub-directory of a git work tree: still the repository's path
    execFileSync("git", ["init", "-q"], { cwd: repo });
    const inside = await spawnCli(["validate", "."], { cwd: path.join(repo, "config") });
    expect(inside.stdout).toContain(`error[SCHEMA_VIOLATION] config/keys.yaml:${at.line}:${at.column}`);
  });

  it("names the other places a message points at from the repository's root too: each opens from there", async () => {
    const repo = await tempRepo({
      "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: 5"),
      "config/team/more-keys.yaml": doc("OrgKey", "acme", "keyId: org-other\nrate: 5"),
      "config/copy.yaml": doc("OrgKey", "copy", "keyId: org-acme\nrate: 5"),
    });
    execFileSync("git", ["init", "-q"], { cwd: repo });
    const json = JSON.parse((await spawnCli(["validate", ".", "--format", "json"], { cwd: path.join(repo, "config") })).stdout) as {
      diagnostics: Array<{ code: string; file: string; message: string }>;
    };
    const pointed = json.diagnostics.flatMap((d) =>
      [...d.message.matchAll(/([\w/.-]+\.yaml):(\d+)/g)].map((m) => ({ code: d.code, file: m[1]!, line: Number(m[2]) })),
    );
    expect(pointed.map((p) => p.code).sort()).toEqual(["DUPLICATE_IDENTITY", "DUPLICATE_NAME", "DUPLICATE_NAME"]);
    const located = new Set(json.diagnostics.map((d) => d.file));
    for (const p of pointed) {
      // the place a user opens: the file exists from the repository's root, and the line starts a resource there
      const lines = readFileSync(path.join(repo, p.file), "utf8").split("\n");
      expect(lines[p.line - 1], `${p.file}:${p.line}`).toMatch(/^apiVersion:/);
      expect(p.file.startsWith("config/"), p.file).toBe(true);
    }
    expect([...located].every((f) => f.startsWith("config/"))).toBe(true);
    // the plan names them the same way
    const cfg = await tempRepo({ "gatesync.yaml": gitSourceConfig("/nonexistent.git", "/tmp/unused-cache") });
    const plan = await runCli(["plan", "--config", path.join(cfg, "gatesync.yaml"), "--dir", path.join(repo, "config")]);
    expect(plan.code).toBe(1);
    expect(plan.stdout + plan.stderr).toContain("OrgKey/acme is defined twice; also at config/team/more-keys.yaml:1");
    expect(plan.stdout + plan.stderr).toMatch(/OrgKey\/\w+ and OrgKey\/\w+ \(config\/[\w/-]+\.yaml:1\) address the same server object/);
  });

  it("escapes newlines, percent signs, colons and commas as the workflow-command syntax requires", async () => {
    const repo = await tempRepo({ "config/a,b:c.yaml": doc("OrgKey", "x", "keyId: 100%\nrate: fast") });
    const r = await spawnCli(["validate", "config", "--format", "github"], { cwd: repo });
    expect(r.stdout).toContain("file=config/a%2Cb%3Ac.yaml,");
    for (const line of r.stdout.trim().split("\n")) expect(line.startsWith("::") || line.startsWith("gatesync validate:")).toBe(true);
  });

  it("writes a GitLab Code Quality report with stable fingerprints", async () => {
    const repo = await tempRepo(files);
    const first = await spawnCli(["validate", "config", "--format", "gitlab"], { cwd: repo });
    expect(first.code).toBe(1);
    const report = JSON.parse(first.stdout) as Array<Record<string, unknown>>;
    expect(report).toHaveLength(1);
    expect(report[0]).toMatchObject({
      check_name: "SCHEMA_VIOLATION",
      severity: "major",
      location: { path: "config/keys.yaml", lines: { begin: positionOf(broken, "fast").line } },
    });
    expect(report[0]!.description).toContain("OrgKey/acme spec.rate");
    const again = JSON.parse((await spawnCli(["validate", "config", "--format", "gitlab"], { cwd: repo })).stdout) as Array<Record<string, unknown>>;
    expect(again[0]!.fingerprint).toBe(report[0]!.fingerprint);
    const valid = await spawnCli(["validate", "config", "--format", "gitlab"], { cwd: await tempRepo({ "config/ok.yaml": files["config/ok.yaml"] }) });
    expect([valid.code, JSON.parse(valid.stdout)]).toEqual([0, []]);
  });
});

describe("gatesync plan --dir on a git checkout", () => {
  it("shows the checkout's HEAD commit", async () => {
    const repo = await committedRepo({ "config/keys.yaml": doc("OrgKey", "ok", "keyId: org-ok\nrate: 5") });
    const cfg = await tempRepo({ "gatesync.yaml": gitSourceConfig("/nonexistent.git", "/tmp/unused-cache") });
    const r = await runCli(["plan", "--config", path.join(cfg, "gatesync.yaml"), "--dir", path.join(repo.dir, "config")]);
    expect(r.stderr).toBe("");
    expect(r.stdout).toContain(`gatesync plan for ${repo.commit.slice(0, 12)}`);
    const json = await runCli(["plan", "--config", path.join(cfg, "gatesync.yaml"), "--dir", path.join(repo.dir, "config"), "--format", "json"]);
    expect((JSON.parse(json.stdout) as { commit: string }).commit).toBe(repo.commit);
  });

  it("names no commit, and still plans, when git answers with something else or does not answer", async () => {
    const repo = await committedRepo({ "config/keys.yaml": doc("OrgKey", "ok", "keyId: org-ok\nrate: 5") });
    const cfg = await tempRepo({ "gatesync.yaml": gitSourceConfig("/nonexistent.git", "/tmp/unused-cache") });
    const fakeGit = async (script: string): Promise<string> => {
      const bin = await tempRepo({ git: `#!/bin/sh\n${script}\n` });
      await chmod(path.join(bin, "git"), 0o755);
      return bin;
    };
    const plan = async (bin: string): Promise<{ code: number; stdout: string; ms: number }> => {
      const started = Date.now();
      const r = await spawnCli(["plan", "--config", path.join(cfg, "gatesync.yaml"), "--dir", path.join(repo.dir, "config")], {
        env: { PATH: `${bin}:${process.env.PATH ?? ""}` },
      });
      return { ...r, ms: Date.now() - started };
    };
    const garbled = await plan(await fakeGit("echo 'not a commit; rm -rf /'"));
    expect(garbled.code).toBe(0);
    expect(garbled.stdout).toMatch(/^gatesync plan \(/);
    expect(garbled.stdout).toContain("OrgKey/ok");
    // a git that never answers: the plan waits for it no longer than the timeout
    const hung = await plan(await fakeGit("exec sleep 60"));
    expect(hung.code).toBe(0);
    expect(hung.stdout).toMatch(/^gatesync plan \(/);
    expect(hung.stdout).toContain("OrgKey/ok");
    expect(hung.ms).toBeLessThan(30_000);
  }, 60_000);
});
