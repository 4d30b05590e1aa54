/**
 * Containment: a commit that replaces the sub-directory (or a parent of it) with a symbolic
 * link to a directory of the host is refused with PATH_ESCAPE, and nothing is read or applied.
 */
import { symlinkSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { listResourceFiles } from "../../src/load/list-files.js";
import { GitSource } from "../../src/source/git-source.js";
import { spawnCli } from "../helpers/cli.js";
import { startEchoServer } from "../helpers/echo-server.js";
import { git } from "../helpers/git-repo.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const orgKey = (name: string): string => `apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata: { name: ${name} }\nspec: { keyId: ${name} }\n`;

/** An origin whose main is one good commit, then a commit replacing `link` with a link to `outside`. */
async function escapingOrigin(link: string, subdirectory: string): Promise<{ dir: string; origin: string; outside: string; good: string; bad: string }> {
  const dir = await tempRepo({ [`outside/${path.basename(subdirectory)}/stolen.yaml`]: orgKey("stolen"), "outside/stolen.yaml": orgKey("stolen") });
  const work = path.join(dir, "work");
  await mkdir(path.join(work, subdirectory), { recursive: true });
  await writeFile(path.join(work, subdirectory, "k.yaml"), orgKey("k"));
  git(work, "init", "-q", "-b", "main");
  git(work, "add", "-A");
  git(work, "commit", "-q", "-m", "good");
  const good = git(work, "rev-parse", "HEAD");
  await rm(path.join(work, link), { recursive: true });
  symlinkSync(path.join(dir, "outside"), path.join(work, link));
  git(work, "add", "-A");
  git(work, "commit", "-q", "-m", "replace the directory with a link out of the repository");
  const bad = git(work, "rev-parse", "HEAD");
  return { dir, origin: work, outside: path.join(dir, "outside"), good, bad };
}

describe("containment of the git source", () => {
  it("refuses a sub-directory that a commit replaced with a link out of the checkout", async () => {
    const o = await escapingOrigin("config", "config");
    const at = (commit: string): GitSource =>
      new GitSource({ url: o.origin, commit, subdirectory: "config", cacheDir: path.join(o.dir, `cache-${commit.slice(0, 6)}`) });
    expect((await at(o.good).fetch()).commit).toBe(o.good);
    const refused = await at(o.bad)
      .fetch()
      .catch((err: unknown) => err as Error & { code: string });
    expect((refused as { code?: string }).code).toBe("PATH_ESCAPE");
    expect((refused as Error).message).toContain("leads outside the repository");
  });

  it("refuses a link anywhere along the path: a parent of the sub-directory", async () => {
    const o = await escapingOrigin("deploy", "deploy/config");
    const source = new GitSource({ url: o.origin, commit: o.bad, subdirectory: "deploy/config", cacheDir: path.join(o.dir, "cache") });
    await expect(source.fetch()).rejects.toMatchObject({ code: "PATH_ESCAPE" });
    // and `..` is no way out either
    const dotdot = new GitSource({ url: o.origin, commit: o.good, subdirectory: "../..", cacheDir: path.join(o.dir, "cache2") });
    await expect(dotdot.fetch()).rejects.toMatchObject({ code: "PATH_ESCAPE" });
  });

  it("listing refuses a resource directory whose real path leaves its boundary", async () => {
    const o = await escapingOrigin("config", "config");
    await expect(listResourceFiles({ root: path.join(o.origin, "config"), boundary: o.origin, maxFiles: 10 })).rejects.toMatchObject({ code: "PATH_ESCAPE" });
  });

  it("the daemon applies nothing from such a commit", async () => {
    const o = await escapingOrigin("config", "config");
    const echo = await startEchoServer();
    const cfg = path.join(o.dir, "gatesync.yaml");
    await writeFile(
      cfg,
      `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: ${JSON.stringify(o.origin)}, branch: main, subdirectory: config, cacheDir: ./cache } }
targets:
  gateway: { url: ${echo.url}, credentialEnv: GW_KEY }
state: { backend: sqlite, path: ./state.db }
`,
    );
    const run = await spawnCli(["run", "--once", "--config", cfg], { cwd: o.dir, env: { GW_KEY: "containment-test-key" } });
    await echo.stop();
    expect(run.code).not.toBe(0);
    expect(run.stdout + run.stderr).toContain("PATH_ESCAPE");
    expect(echo.requests()).toBe(0);
    const validate = await spawnCli(["validate", "--config", cfg], { cwd: o.dir, env: { GW_KEY: "containment-test-key" } });
    expect(validate.code).toBe(1);
    expect(validate.stdout + validate.stderr).toContain("PATH_ESCAPE");
    expect(validate.stdout + validate.stderr).not.toContain("stolen");
  }, 60_000);
});
