/**
 * A git source fetches the ref it follows and nothing else: whatever anybody pushes beside it —
 * a branch holding a large file, a branch or tag whose name is too long for the filesystem (a
 * fetch that takes such a ref fails as a whole: every run would stop at the last good commit) —
 * costs the daemon nothing, and the followed branch still moves.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { appendFile, readdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GitSource } from "../../src/source/git-source.js";
import { git } from "../helpers/git-repo.js";
import { gitRemote, pushFiles } from "../helpers/git-remote.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

/** A ref name of 300 characters: more than a file name may have (255), so no loose ref can hold it. */
const longName = "x".repeat(300);

/** Refs the remote holds in packed-refs only (a hosting service's refs are not files either), all at `commit`. */
async function packRefs(origin: string, refs: readonly string[], commit: string): Promise<void> {
  await appendFile(path.join(origin, "packed-refs"), refs.map((r) => `${commit} ${r}\n`).join(""));
}

const exists = (cwd: string, object: string): boolean => {
  try {
    execFileSync("git", ["cat-file", "-e", object], { cwd, stdio: "ignore" });
    return true;
  } catch {
    return false;
  }
};

describe("the refs a git source fetches", () => {
  it("takes the followed branch alone: a large branch beside it and refs named too long for the filesystem cost nothing", async () => {
    const dir = await tempRepo();
    const work = gitRemote(dir);
    const origin = path.join(dir, "origin.git");
    const first = await pushFiles(work, { "config/v.txt": "one" }, "one");
    const cacheDir = path.join(dir, "cache");
    const source = new GitSource({ url: origin, branch: "main", subdirectory: "config", cacheDir });
    expect((await source.fetch()).commit).toBe(first);

    // beside it: a branch with a 4 MB file, and a branch and a tag whose names no file system takes
    git(work, "checkout", "-q", "-b", "side");
    await writeFile(path.join(work, "big.bin"), randomBytes(4 * 1024 * 1024));
    git(work, "add", "big.bin");
    git(work, "commit", "-q", "-m", "big");
    const big = git(work, "rev-parse", "HEAD:big.bin");
    git(work, "push", "-q", "origin", "side");
    git(work, "checkout", "-q", "main");
    const second = await pushFiles(work, { "config/v.txt": "two" }, "two");
    await packRefs(origin, [`refs/heads/feature/${longName}`, `refs/tags/${longName}`], second);

    const moved = await source.fetch({ announced: true });
    expect(moved.commit).toBe(second);
    const [cache] = (await readdir(cacheDir)).filter((d) => !d.endsWith(".trees"));
    const checkout = path.join(cacheDir, cache!);
    expect(exists(checkout, second)).toBe(true);
    // nothing of the side branch came
    expect(exists(checkout, big)).toBe(false);
    const refs = execFileSync("git", ["for-each-ref", "--format=%(refname)"], { cwd: checkout, encoding: "utf8" });
    expect(refs).not.toMatch(/side|refs\/tags|x{300}/);

    // and the followed branch keeps moving
    const third = await pushFiles(work, { "config/v.txt": "three" }, "three");
    expect((await source.fetch({ announced: true })).commit).toBe(third);
  });

  it("takes a tag pattern's matching tags alone, by their objects: a tag named too long is passed over, a deleted one is left", async () => {
    const dir = await tempRepo();
    const work = gitRemote(dir);
    const origin = path.join(dir, "origin.git");
    const first = await pushFiles(work, { "v.txt": "one" }, "one");
    git(work, "tag", "v1.0.0");
    git(work, "push", "-q", "origin", "v1.0.0");
    const source = new GitSource({ url: origin, tagPattern: "v*", cacheDir: path.join(dir, "cache") });
    expect(await source.fetch()).toMatchObject({ commit: first, tag: "v1.0.0" });

    // a matching tag and another one, both named too long for any file system, at a newer commit
    const second = await pushFiles(work, { "v.txt": "two" }, "two");
    await packRefs(origin, [`refs/tags/v9.9.9-${longName}`, `refs/tags/${longName}`], second);
    git(work, "tag", "v1.1.0");
    git(work, "push", "-q", "origin", "v1.1.0");
    expect(await source.fetch({ announced: true })).toMatchObject({ commit: second, tag: "v1.1.0" });

    // a newer tag, then deleted from the remote: the next fetch follows what the remote lists
    const third = await pushFiles(work, { "v.txt": "three" }, "three");
    git(work, "tag", "v1.2.0");
    git(work, "push", "-q", "origin", "v1.2.0");
    expect(await source.fetch({ announced: true })).toMatchObject({ commit: third, tag: "v1.2.0" });
    git(work, "push", "-q", "origin", ":refs/tags/v1.2.0");
    expect(await source.fetch({ announced: true })).toMatchObject({ commit: second, tag: "v1.1.0" });
  });

  it("pins a commit the clone of the default branch holds without fetching any other branch", async () => {
    const dir = await tempRepo();
    const work = gitRemote(dir);
    const origin = path.join(dir, "origin.git");
    const pinned = await pushFiles(work, { "v.txt": "one" }, "one");
    await pushFiles(work, { "v.txt": "two" }, "two");
    await packRefs(origin, [`refs/heads/feature/${longName}`], pinned);
    const snapshot = await new GitSource({ url: origin, commit: pinned, cacheDir: path.join(dir, "cache") }).fetch();
    expect(snapshot.commit).toBe(pinned);
  });

  it("follows the remote's default branch when none is named, and names the remote's branches for a typo", async () => {
    const dir = await tempRepo();
    const work = gitRemote(dir);
    const origin = path.join(dir, "origin.git");
    const head = await pushFiles(work, { "v.txt": "one" }, "one");
    await packRefs(origin, [`refs/heads/${longName}`], head);
    const cacheDir = path.join(dir, "cache");
    expect((await new GitSource({ url: origin, cacheDir }).fetch()).commit).toBe(head);
    const typo = new GitSource({ url: origin, branch: "mian", cacheDir });
    // a remote of more branches than the hint lists (2 MiB of listing): the typo is still a clear failure, in bounded memory
    const crowded = new GitSource({ url: origin, branch: "mian", cacheDir: path.join(dir, "cache-crowded") });
    await packRefs(
      origin,
      Array.from({ length: 30_000 }, (_, i) => `refs/heads/crowd/${"b".repeat(40)}-${i}`),
      head,
    );
    await expect(crowded.fetch()).rejects.toMatchObject({
      code: "SOURCE_FETCH",
      message: expect.stringContaining("couldn't find remote ref refs/heads/mian") as string,
    });
    await writeFile(path.join(origin, "packed-refs"), `${head} refs/heads/${longName}\n`);
    const err = (await typo.fetch().then(
      () => undefined,
      (e: unknown) => e,
    )) as (Error & { code?: string; hint?: string }) | undefined;
    expect(err?.code).toBe("SOURCE_INVALID");
    expect(err?.message).toMatch(/the branch `mian` does not exist/);
    expect(err?.hint).toMatch(/did you mean `main`\?/);
  });
});
