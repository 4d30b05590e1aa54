import { execFileSync } from "node:child_process";
import { readFile, readdir, writeFile, mkdir } from "node:fs/promises";
import { createServer } from "node:net";
import type { AddressInfo } from "node:net";
import path from "node:path";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { GitSource } from "../../src/source/git-source.js";
import { redactUrl } from "../../src/source/source.js";
import { gitRemote } from "../helpers/git-remote.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);
let dir: string;
let work: string;
const git = (...args: string[]): string =>
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], {
    cwd: work,
    encoding: "utf8",
    stdio: ["ignore", "pipe", "pipe"],
  }).trim();
const commits: Record<string, string> = {};

beforeAll(async () => {
  dir = await tempRepo();
  work = gitRemote(dir);
  await mkdir(path.join(work, "config"));
  for (const v of ["one", "two", "three"]) {
    await writeFile(path.join(work, "config/v.txt"), v);
    git("add", "-A");
    git("commit", "-q", "-m", v);
    commits[v] = git("rev-parse", "HEAD");
    if (v === "two") git("tag", "-a", "v2", "-m", "release two");
  }
  git("push", "-q", "--tags", "origin", "main");
});

const source = (extra: Partial<ConstructorParameters<typeof GitSource>[0]>): GitSource =>
  new GitSource({ url: path.join(dir, "origin.git"), subdirectory: "config", cacheDir: path.join(dir, "cache"), ...extra });

describe("git source", () => {
  it("follows a branch, an annotated tag, or a pinned commit, into a sub-directory", async () => {
    const branch = await source({ branch: "main" }).fetch();
    expect(branch.commit).toBe(commits.three);
    expect(await readFile(path.join(branch.root, "v.txt"), "utf8")).toBe("three");
    const tag = await source({ tag: "v2" }).fetch();
    expect(tag.commit).toBe(commits.two);
    expect(await readFile(path.join(tag.root, "v.txt"), "utf8")).toBe("two");
    const pinned = await source({ commit: commits.one! }).fetch();
    expect(await readFile(path.join(pinned.root, "v.txt"), "utf8")).toBe("one");
  });

  it("returns the same snapshot while the branch has not moved, and the new one once it has", async () => {
    const s = source({ branch: "main" });
    const first = await s.fetch();
    expect(await s.fetch()).toBe(first);
    await writeFile(path.join(work, "config/v.txt"), "four");
    git("commit", "-q", "-am", "four");
    git("push", "-q", "origin", "main");
    const moved = await s.fetch();
    expect(moved.commit).toBe(git("rev-parse", "HEAD"));
    expect(await readFile(path.join(moved.root, "v.txt"), "utf8")).toBe("four");
  });

  it("after an announced push fetches at once: the pushed commit, or the same snapshot when nothing moved", async () => {
    const s = source({ branch: "main" });
    const first = await s.fetch();
    expect(await s.fetch({ announced: true })).toBe(first);
    await writeFile(path.join(work, "config/v.txt"), "announced");
    git("commit", "-q", "-am", "announced");
    git("push", "-q", "origin", "main");
    const moved = await s.fetch({ announced: true });
    expect(moved.commit).toBe(git("rev-parse", "HEAD"));
    expect(await readFile(path.join(moved.root, "v.txt"), "utf8")).toBe("announced");
  });

  it("says clearly when the sub-directory or the ref does not exist", async () => {
    await expect(source({ branch: "main", subdirectory: "nope" }).fetch()).rejects.toThrow(/sub-directory nope does not exist/);
    await expect(source({ branch: "no-such-branch" }).fetch()).rejects.toThrow(/the branch `no-such-branch` does not exist in .*/);
  });

  it("never shows a token or URL credentials", async () => {
    const s = new GitSource({
      url: "https://user:pa55word@127.0.0.1:9/repo.git",
      branch: "main",
      cacheDir: path.join(dir, "cache2"),
      token: "tok-123456",
      timeoutMs: 5000,
    });
    expect(s.description).not.toMatch(/pa55word|tok-123456/);
    const err = (await s.fetch().then(
      () => undefined,
      (e: unknown) => e,
    )) as Error;
    expect(err.message).not.toMatch(/pa55word|tok-123456/);
    expect(redactUrl("https://u:p@host/x.git")).toBe("https://host/x.git (credentials removed)");
  });

  it("stops a fetch whose remote never answers, within its time limit, and names no credential", async () => {
    // a remote that takes the connection and says nothing: git's fetch would wait for ever
    const silent = createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, "127.0.0.1", resolve));
    try {
      const cacheDir = path.join(dir, "cache-silent");
      const s = new GitSource({ url: path.join(dir, "origin.git"), branch: "main", subdirectory: "config", cacheDir, timeoutMs: 1500 });
      await s.fetch();
      // the cached clone's remote moves to the silent server, with credentials in its URL
      const [cache] = await readdir(cacheDir);
      const port = (silent.address() as AddressInfo).port;
      execFileSync("git", ["remote", "set-url", "origin", `http://user:pa55word@127.0.0.1:${port}/repo.git`], { cwd: path.join(cacheDir, cache!) });
      const started = Date.now();
      const err = (await s.fetch({ announced: true }).then(
        () => undefined,
        (e: unknown) => e,
      )) as Error & { code?: string };
      expect(err.code).toBe("SOURCE_FETCH");
      expect(err.message).toMatch(/git fetch was stopped after 1500 ms/);
      expect(err.message).not.toMatch(/pa55word/);
      expect(Date.now() - started).toBeLessThan(15_000);
    } finally {
      silent.close();
    }
  });

  it("starts git's housekeeping after a fetch only once the run reading the fetched commit lets go of it, or the source closes", async () => {
    // every git process the source starts, in the order they start, through a `git` ahead of the real one on PATH
    const bin = await tempRepo();
    const started = path.join(bin, "started.txt");
    const real = execFileSync("sh", ["-c", "command -v git"], { encoding: "utf8" }).trim();
    await writeFile(path.join(bin, "git"), `#!/bin/sh\necho "$1" >> ${JSON.stringify(started)}\nexec ${JSON.stringify(real)} "$@"\n`, { mode: 0o755 });
    const commands = async (): Promise<string[]> => (await readFile(started, "utf8").catch(() => "")).split("\n").filter((l) => l !== "");
    const before = process.env.PATH;
    process.env.PATH = `${bin}${path.delimiter}${before ?? ""}`;
    try {
      const s = source({ branch: "main", cacheDir: path.join(dir, "cache-housekeeping") });
      // a run: holds what it fetched while it reads; a newer snapshot's reader lets go of the one before
      const first = await s.fetch();
      const firstRun = first.hold!();
      const latest = first.hold!();
      await writeFile(path.join(work, "config/v.txt"), "tidied");
      git("commit", "-q", "-am", "tidied");
      git("push", "-q", "origin", "main");
      // the first run ends: the housekeeping of its fetch starts
      firstRun();
      for (let i = 0; i < 100 && !(await commands()).includes("gc"); i++) await new Promise((r) => setTimeout(r, 20));
      expect(await commands()).toContain("gc");
      await writeFile(started, "");
      const moved = await s.fetch({ announced: true });
      const run = moved.hold!();
      latest();
      await new Promise((r) => setTimeout(r, 300));
      expect(await readFile(path.join(moved.root, "v.txt"), "utf8")).toBe("tidied");
      // fetched and checked out — the commit, author and subject read from the files the fetch wrote, no `git log` —
      // and nothing else started while the run reads (letting go of the older commit starts nothing)
      expect(await commands()).toEqual(["fetch", "read-tree"]);
      expect(moved).toMatchObject({ commit: git("rev-parse", "HEAD"), subject: "tidied" });
      run();
      for (let i = 0; i < 100 && !(await commands()).includes("gc"); i++) await new Promise((r) => setTimeout(r, 20));
      expect((await commands()).filter((c) => ["fetch", "read-tree", "gc"].includes(c))).toEqual(["fetch", "read-tree", "gc"]);
      await s.close();
      // a fetch nobody held (a one-shot command): its housekeeping runs as the source closes
      await writeFile(path.join(work, "config/v.txt"), "closed");
      git("commit", "-q", "-am", "closed");
      git("push", "-q", "origin", "main");
      const once = source({ branch: "main", cacheDir: path.join(dir, "cache-housekeeping") });
      await writeFile(started, "");
      await once.fetch({ announced: true });
      expect(await commands()).not.toContain("gc");
      await once.close();
      expect(await commands()).toContain("gc");
    } finally {
      process.env.PATH = before;
    }
  });
});
