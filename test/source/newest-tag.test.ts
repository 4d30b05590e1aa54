/**
 * `track: { tag: PATTERN }` at the git source, against a real bare remote: which tag is the
 * newest (semantic version, else the tagged commit's date), and the tag names a repository
 * writes as an attacker's input — a name shaped like a git option is never read as one, a name
 * past the length bound is passed over, more tags than the bound are refused, a glob is matched
 * without backtracking.
 */
import { execFileSync } from "node:child_process";
import { appendFile, mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GitSource } from "../../src/source/git-source.js";
import { compareVersions, maxTags, newestTag, versionOf } from "../../src/source/newest-tag.js";
import { gitRemote } from "../helpers/git-remote.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

/** A remote whose main holds one commit per entry of `values` (a minute apart, file config/v.txt), and the commits. */
async function remoteWith(values: readonly string[]): Promise<{ dir: string; origin: string; commits: string[]; git: (...a: string[]) => string }> {
  const dir = await tempRepo();
  const work = gitRemote(dir);
  let clock = 1_790_000_000;
  const git = (...args: string[]): string =>
    execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
      cwd: work,
      encoding: "utf8",
      env: { ...process.env, GIT_COMMITTER_DATE: `${clock} +0000`, GIT_AUTHOR_DATE: `${clock} +0000` },
    }).trim();
  await mkdir(path.join(work, "config"));
  const commits: string[] = [];
  for (const v of values) {
    clock += 60;
    await writeFile(path.join(work, "config/v.txt"), v);
    git("add", "-A");
    git("commit", "-q", "-m", v);
    commits.push(git("rev-parse", "HEAD"));
  }
  git("push", "-q", "origin", "main");
  return { dir, origin: path.join(dir, "origin.git"), commits, git };
}

const follow = (dir: string, origin: string, tagPattern: string): GitSource =>
  new GitSource({ url: origin, tagPattern, subdirectory: "config", cacheDir: path.join(dir, "cache") });

describe("the newest tag matching a pattern", () => {
  it("is the highest semantic version: numbers compared as numbers, a prerelease below its release", () => {
    const names = [
      "v1.2.10",
      "v1.2.9",
      "v1.10.0",
      "v1.2.10-rc.1",
      "v1.2.10-rc.10",
      "v1.2.10-rc.2",
      "v1.2.10-alpha",
      "v1.2.10-rc",
      "v99999999999999999999999.0.0",
    ];
    const sorted = names
      .map((n) => ({ n, v: versionOf(n, "")! }))
      .sort((a, b) => compareVersions(a.v, b.v))
      .map((x) => x.n);
    expect(sorted).toEqual([
      "v1.2.9",
      "v1.2.10-alpha",
      "v1.2.10-rc",
      "v1.2.10-rc.1",
      "v1.2.10-rc.2",
      "v1.2.10-rc.10",
      "v1.2.10",
      "v1.10.0",
      "v99999999999999999999999.0.0",
    ]);
    // the pattern's literal prefix is not part of the version
    expect(
      newestTag(
        [
          { name: "release-1.9.0", commit: "a".repeat(40), date: 2 },
          { name: "release-1.10.0", commit: "b".repeat(40), date: 1 },
        ],
        "release-*",
      )?.name,
    ).toBe("release-1.10.0");
  });

  it("is the one on the newest commit when the names are not all versions, whatever their order by name", async () => {
    const { dir, origin, commits, git } = await remoteWith(["one", "two", "three"]);
    git("tag", "deploy-b", commits[0]!);
    git("tag", "-a", "-m", "annotated", "deploy-a", commits[1]!);
    git("tag", "other", commits[2]!);
    git("push", "-q", "origin", "--tags");
    const source = follow(dir, origin, "deploy-*");
    const snapshot = await source.fetch();
    expect(snapshot.tag).toBe("deploy-a");
    expect(snapshot.commit).toBe(commits[1]);
    expect(await readFile(path.join(snapshot.root, "v.txt"), "utf8")).toBe("two");
    // a second tag on the same commit (same date: the name decides) is the one reported
    git("tag", "deploy-c", commits[1]!);
    git("push", "-q", "origin", "--tags");
    expect(await source.fetch()).toMatchObject({ commit: commits[1], tag: "deploy-c" });
  });

  it("keeps version order when one matching tag is not a version: the stray tag on the newest commit is passed over, and named", async () => {
    const { dir, origin, commits, git } = await remoteWith(["one", "two", "three"]);
    git("tag", "v1.2.10", commits[1]!);
    git("tag", "v1.2.9", commits[0]!);
    // pushed by someone on the newest commit: by commit date it would win
    git("tag", "v-latest-test", commits[2]!);
    git("push", "-q", "origin", "--tags");
    const snapshot = await follow(dir, origin, "v*").fetch();
    expect(snapshot).toMatchObject({ commit: commits[1], tag: "v1.2.10", skippedTags: ["v-latest-test"] });
    expect(await readFile(path.join(snapshot.root, "v.txt"), "utf8")).toBe("two");
    // a newer version is followed as ever; the stray tag is still named
    git("tag", "v1.3.0", commits[2]!);
    git("push", "-q", "origin", "--tags");
    expect(await follow(dir, origin, "v*").fetch()).toMatchObject({ commit: commits[2], tag: "v1.3.0", skippedTags: ["v-latest-test"] });
  });

  it("never hands a tag name to git: a name shaped like an option is followed as the tag it is", async () => {
    const { dir, origin, commits, git } = await remoteWith(["safe", "tagged"]);
    // a ref `git tag` refuses but a push can create: read as an option, it would replace the program git runs on the remote
    git("update-ref", "refs/tags/--upload-pack=false", commits[1]!);
    git("tag", "older", commits[0]!);
    git("push", "-q", "origin", "--tags");
    const snapshot = await follow(dir, origin, "*").fetch();
    expect(snapshot.commit).toBe(commits[1]);
    expect(snapshot.tag).toBe("--upload-pack=false");
    expect(await readFile(path.join(snapshot.root, "v.txt"), "utf8")).toBe("tagged");
  });

  it("when no tag matches, says git commands that, run as printed, make the next fetch follow the tag they push", async () => {
    for (const pattern of ["v*", "release-?.*"]) {
      const { dir, origin, commits, git } = await remoteWith(["only"]);
      const source = follow(dir, origin, pattern);
      const refused = (await source.fetch().catch((e: unknown) => e)) as { code?: string; hint?: string };
      expect(refused.code).toBe("SOURCE_INVALID");
      const printed = /`(git tag [^`]+ && git push --tags)`/.exec(refused.hint ?? "")?.[1];
      expect(printed, refused.hint).toBeDefined();
      execFileSync("sh", ["-c", printed!], { cwd: git("rev-parse", "--show-toplevel"), stdio: "ignore" });
      const snapshot = await source.fetch({ announced: true });
      expect(snapshot.commit).toBe(commits[0]);
      expect(snapshot.tag).toBe(/^git tag (\S+)/.exec(printed!)?.[1]);
    }
  });

  it("passes over a name past the length bound and tags that do not match, and refuses more matching tags than it reads", async () => {
    const { dir, origin, commits, git } = await remoteWith(["old", "new"]);
    git("tag", "v1.0.0", commits[0]!);
    // 240 characters: past the bound, short enough for a ref file of its own
    git("update-ref", `refs/tags/v1.0.1-${"x".repeat(233)}`, commits[1]!);
    git("push", "-q", "origin", "--tags");
    const source = follow(dir, origin, "v*");
    expect((await source.fetch()).tag).toBe("v1.0.0");
    // more tags than the bound, written straight into the remote's packed refs: that do not match, they cost a listing
    const tags = (prefix: string): string => `${Array.from({ length: maxTags + 1 }, (_, i) => `${commits[0]!} refs/tags/${prefix}${i}`).join("\n")}\n`;
    await appendFile(path.join(origin, "packed-refs"), tags("bulk-"));
    expect((await follow(dir, origin, "v*").fetch({ announced: true })).tag).toBe("v1.0.0");
    // that match, they are refused, said
    await appendFile(path.join(origin, "packed-refs"), tags("v0.0."));
    await expect(follow(dir, origin, "v*").fetch({ announced: true })).rejects.toMatchObject({
      code: "SOURCE_INVALID",
      message: expect.stringContaining(`${maxTags + 2} tags of the repository match \`v*\`, more than the ${maxTags} gatesync reads`) as string,
      hint: expect.stringContaining("narrow the pattern") as string,
    });
    // the hint followed: a narrower pattern is read, and follows its newest tag
    expect((await follow(dir, origin, "v1.*").fetch({ announced: true })).tag).toBe("v1.0.0");
  }, 60_000);

  it("matches a glob of many wildcards against a long name without backtracking", () => {
    const name = "a".repeat(200);
    // a backtracking engine tries every split of the name between eleven stars: it would not return
    expect(newestTag([{ name, commit: "c".repeat(40), date: 1 }], `${"*a".repeat(11)}*b`)).toBeUndefined();
    expect(newestTag([{ name, commit: "c".repeat(40), date: 1 }], `${"*a".repeat(11)}*`)?.name).toBe(name);
  });
});
