/**
 * One error vocabulary: every code is documented, each class carries its own family of codes
 * (the constructors' types; here the runtime side), and the failures the issue named carry
 * the code of what actually failed.
 */
import { execFileSync } from "node:child_process";
import { readFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { ConfigError, ErrorCode, GatesyncError, InternalError, StateError, UsageError, ValidationFailed } from "../../src/errors.js";
import { GitSource } from "../../src/source/git-source.js";
import { runCli } from "../helpers/cli.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

describe("error codes", () => {
  it("documents every code in docs/user/errors.md, and nothing that is not one", async () => {
    const doc = await readFile(path.join(projectRoot, "docs/user/errors.md"), "utf8");
    const documented = new Set([...doc.matchAll(/^\| `([A-Z_]+)` \|/gm)].map((m) => m[1]));
    expect([...documented].sort()).toEqual(Object.values(ErrorCode).sort());
  });

  it("gives each class its own family", () => {
    expect(new UsageError("x").code).toBe("USAGE");
    expect(new InternalError("x").code).toBe("INTERNAL");
    expect(new ValidationFailed([{ severity: "error", code: ErrorCode.SCHEMA_VIOLATION, message: "m" }]).code).toBe("VALIDATION_FAILED");
    expect(new StateError(ErrorCode.STATE_IO, "x")).toBeInstanceOf(GatesyncError);
    expect(new ConfigError(ErrorCode.CONFIG_INVALID, "x").name).toBe("ConfigError");
  });

  it("a failed fetch of the git source is SOURCE_FETCH; a missing sub-directory SOURCE_INVALID", async () => {
    const dir = await tempRepo();
    const unreachable = new GitSource({ url: "http://127.0.0.1:9/nowhere.git", branch: "main", cacheDir: path.join(dir, "cache"), timeoutMs: 5000 });
    await expect(unreachable.fetch()).rejects.toMatchObject({ name: "SourceError", code: "SOURCE_FETCH" });
    const origin = path.join(dir, "origin.git");
    execFileSync("git", ["init", "-q", "--bare", "-b", "main", origin]);
    const work = path.join(dir, "work");
    execFileSync("git", ["clone", "-q", origin, work], { stdio: "ignore" });
    const git = (...args: string[]): string =>
      execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd: work, encoding: "utf8" });
    git("checkout", "-q", "-b", "main");
    git("commit", "-q", "--allow-empty", "-m", "empty");
    git("push", "-q", "origin", "main");
    const noSubdir = new GitSource({ url: origin, branch: "main", subdirectory: "config", cacheDir: path.join(dir, "cache2"), timeoutMs: 5000 });
    await expect(noSubdir.fetch()).rejects.toMatchObject({ name: "SourceError", code: "SOURCE_INVALID" });
    await unreachable.close();
    await noSubdir.close();
  });

  it("a state command asked for what is not there is USAGE, said as such", async () => {
    const dir = await tempRepo({
      "gatesync.yaml":
        'apiVersion: gatesync.dev/v1\nkind: GatesyncConfig\nsource: { directory: ./config }\ntargets:\n  gateway: { url: "http://127.0.0.1:9", credentialEnv: GW_KEY }\n',
      "config/.keep": "",
    });
    const r = await runCli(["state", "resolve", "OrgKey/nope", "--forget", "--config", path.join(dir, "gatesync.yaml")]);
    expect(r.code).toBe(1);
    expect(r.stderr).toMatch(/error\[USAGE\] OrgKey\/nope is not in the state/);
  });
});
