/**
 * `gatesync validate` without a directory checks what each environment would apply: its files at
 * the commit its `track:` follows, fetched as `plan` and the daemon fetch them — not the top
 * level's branch for every environment.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { runCli } from "../helpers/cli.js";
import { git } from "../helpers/git-repo.js";
import { gitRemote, pushFiles, trackedEnvironmentsConfig } from "../helpers/git-remote.js";
import { doc } from "../helpers/plan.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

let operatorFile: string;

beforeAll(async () => {
  const dir = await tempRepo();
  const work = gitRemote(dir);
  await pushFiles(work, { "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme\nrate: 5") }, "valid on main");
  // the release branch holds a key whose rate is not a number
  git(work, "checkout", "-q", "-b", "release");
  await writeFile(path.join(work, "config/keys.yaml"), doc("OrgKey", "acme", 'keyId: org-acme\nrate: "fast"'));
  git(work, "commit", "-q", "-am", "invalid on release");
  git(work, "push", "-q", "origin", "release");
  operatorFile = path.join(dir, "operator", "gatesync.yaml");
  await mkdir(path.dirname(operatorFile));
  await writeFile(
    operatorFile,
    trackedEnvironmentsConfig(dir, { staging: { gateway: "http://127.0.0.1:9", track: "{ branch: release }" }, production: { gateway: "http://127.0.0.1:9" } }),
  );
});

describe("gatesync validate of environments that follow different refs", () => {
  it("checks each environment at the commit it follows: the release branch's error is found, main's files are clean", async () => {
    const all = await runCli(["validate", "-c", operatorFile, "--format", "json"]);
    expect(all.code, all.stderr).toBe(1);
    const report = JSON.parse(all.stdout) as { valid: boolean; diagnostics: Array<{ severity: string; file?: string }> };
    expect(report.valid).toBe(false);
    expect(report.diagnostics.filter((d) => d.severity === "error").map((d) => d.file)).toContain("config/keys.yaml");

    const staging = await runCli(["validate", "-c", operatorFile, "--env", "staging", "--format", "json"]);
    expect(staging.code).toBe(1);
    const production = await runCli(["validate", "-c", operatorFile, "--env", "production", "--format", "json"]);
    expect(production.code, production.stdout).toBe(0);
  }, 60_000);
});
