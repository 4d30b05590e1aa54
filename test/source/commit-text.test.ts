/**
 * A commit's author and subject are a repository's text (the history keeps them, the pages show
 * them): a commit whose author name and subject are huge and hold control characters reaches a
 * snapshot bounded and clean, and the files at that commit are read as usual.
 */
import { execFileSync } from "node:child_process";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { GitSource } from "../../src/source/git-source.js";
import { gitRemote } from "../helpers/git-remote.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

describe("a commit's author and subject", () => {
  it("are bounded and stripped of control characters, however the commit wrote them", async () => {
    const dir = await tempRepo();
    const work = gitRemote(dir);
    await mkdir(path.join(work, "config"));
    await writeFile(path.join(work, "config/v.txt"), "one");
    const author = `${"A".repeat(5_000)}\u001b[31m`;
    const subject = `\u0007ring ${"s".repeat(100_000)}\u001b]0;title\u0007`;
    const git = (...args: string[]): string =>
      execFileSync("git", ["-c", `user.name=${author}`, "-c", "user.email=a@example.com", ...args], { cwd: work, encoding: "utf8" }).trim();
    git("add", "-A");
    git("commit", "-q", "-m", subject);
    git("push", "-q", "origin", "HEAD:main");

    const snapshot = await new GitSource({
      url: path.join(dir, "origin.git"),
      branch: "main",
      subdirectory: "config",
      cacheDir: path.join(dir, "cache"),
    }).fetch();
    expect(await readFile(path.join(snapshot.root, "v.txt"), "utf8")).toBe("one");
    for (const text of [snapshot.author, snapshot.subject]) {
      expect(text).toBeDefined();
      // 200 characters kept, and a note of how many more there were
      expect(text!.length).toBeLessThan(260);
      expect(text).toMatch(/… \(\d+ more characters\)$/);
      // eslint-disable-next-line no-control-regex -- none may be left
      expect(text).not.toMatch(/[\u0000-\u0008\u000b-\u001f\u007f]/);
    }
    expect(snapshot.subject!.startsWith(" ring sss")).toBe(true);
  });
});
