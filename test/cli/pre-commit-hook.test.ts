/**
 * .pre-commit-hooks.yaml's hook run as pre-commit runs it: in a git repository with staged
 * changes, its entry and args then the staged files its `files` pattern matches (pre-commit's
 * `git diff --staged --name-only`, searched with the pattern), from the repository's root.
 * Only the staged files' findings are reported, located; a commit of no resource file checks nothing.
 */
import { execFileSync } from "node:child_process";
import { readFileSync, writeFileSync } from "node:fs";
import path from "node:path";
import { parse } from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { bashOutcome, gatesyncOnPath, runnerBase } from "../helpers/ci-runner.js";
import { git } from "../helpers/git-repo.js";
import { doc } from "../helpers/resources.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

interface Hook {
  id: string;
  entry: string;
  args: string[];
  language: string;
  files: string;
  pass_filenames?: boolean;
}
const hooks = parse(readFileSync(path.join(projectRoot, ".pre-commit-hooks.yaml"), "utf8")) as Hook[];
afterAll(removeTempRepos);

/** Runs the hook on what is staged in `dir`, as pre-commit would. */
async function runHook(dir: string, id: string) {
  const hook = hooks.find((h) => h.id === id)!;
  const staged = git(dir, "diff", "--staged", "--name-only", "--diff-filter=ACMRTUXB")
    .split("\n")
    .filter((f) => f !== "" && new RegExp(hook.files).test(f));
  if (staged.length === 0) return { status: 0, stdout: "(no files to check: skipped)", stderr: "" };
  const words = [...hook.entry.split(" "), ...hook.args, ...(hook.pass_filenames === false ? [] : staged)];
  const quoted = words.map((w) => `'${w.replace(/'/g, "'\\''")}'`).join(" ");
  return bashOutcome(["-c", quoted], { cwd: dir, env: { ...runnerBase(await gatesyncOnPath()), CI: "" } });
}

describe("the pre-commit hook", () => {
  it("reports the staged files' findings, each located, and only theirs", async () => {
    expect(hooks.map((h) => h.id)).toEqual(["gatesync-validate", "gatesync-validate-system"]);
    const dir = await tempRepo({
      "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme-hook\nrate: 10\nper: 60"),
      "config/other.yaml": doc("OrgKey", "globex", "keyId: org-globex-hook\nrate: 10\nper: 60"),
      "README.md": "# team\n",
    });
    git(dir, "init", "-q", "-b", "main");
    git(dir, "add", "-A");
    git(dir, "commit", "-qm", "start");
    // an unstaged error elsewhere, and a staged one in keys.yaml
    writeFileSync(path.join(dir, "config/other.yaml"), doc("OrgKey", "globex", 'keyId: org-globex-hook\nrate: "slow"\nper: 60'));
    writeFileSync(path.join(dir, "config/keys.yaml"), doc("OrgKey", "acme", 'keyId: org-acme-hook\nrate: "fast"\nper: 60'));
    git(dir, "add", "config/keys.yaml");
    const r = await runHook(dir, "gatesync-validate-system");
    expect(r.status, r.stdout + r.stderr).toBe(1);
    expect(r.stdout + r.stderr).toMatch(/error\[SCHEMA_VIOLATION\] config\/keys\.yaml:7:9 OrgKey\/acme spec\.rate: must be number/);
    expect(r.stdout + r.stderr).not.toContain("config/other.yaml");

    // fixed and staged: the commit goes through, though other.yaml (not in it) still has its error
    writeFileSync(path.join(dir, "config/keys.yaml"), doc("OrgKey", "acme", "keyId: org-acme-hook\nrate: 20\nper: 60"));
    git(dir, "add", "config/keys.yaml");
    const fixed = await runHook(dir, "gatesync-validate-system");
    expect(fixed.status, fixed.stdout + fixed.stderr).toBe(0);
  }, 60_000);

  it("a staged YAML file outside the resource directory is not reported; a commit of no resource file checks nothing", async () => {
    const dir = await tempRepo({ "config/keys.yaml": doc("OrgKey", "acme", "keyId: org-acme-hook\nrate: 10\nper: 60"), "docs/notes.yaml": "a: [\n" });
    git(dir, "init", "-q", "-b", "main");
    git(dir, "add", "-A");
    const outside = await runHook(dir, "gatesync-validate-system");
    // docs/notes.yaml is not YAML gatesync reads (outside config/): not reported
    expect(outside.status, outside.stdout + outside.stderr).toBe(0);
    expect(outside.stdout + outside.stderr).not.toContain("notes.yaml");
    execFileSync("git", ["commit", "-qm", "start"], { cwd: dir });
    writeFileSync(path.join(dir, "docs/notes.yaml"), "b: [\n");
    git(dir, "add", "-A");
    const none = await runHook(dir, "gatesync-validate-system");
    expect(none.status).toBe(0);
    expect(none.stdout).toContain("valid: 0 resources in 0 files");
  }, 60_000);
});
