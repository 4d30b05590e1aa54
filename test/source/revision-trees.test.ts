/**
 * A git source keeps each revision's files in a directory of their own (revision-trees.ts): a
 * run holding a snapshot reads that commit's files, whatever another environment's fetch brought
 * in meanwhile; a revision nobody reads any more (and not the newest) is removed from disk.
 */
import { existsSync } from "node:fs";
import { mkdir, readFile, writeFile } from "node:fs/promises";
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { SharedSource } from "../../src/daemon/environments/shared-source.js";
import { GitSource } from "../../src/source/git-source.js";
import { eventually } from "../helpers/eventually.js";
import { git } from "../helpers/git-repo.js";
import { gitRemote } from "../helpers/git-remote.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

async function pushed(work: string, text: string): Promise<string> {
  await mkdir(path.join(work, "config"), { recursive: true });
  await writeFile(path.join(work, "config/v.txt"), text);
  git(work, "add", "-A");
  git(work, "commit", "-q", "-m", text);
  git(work, "push", "-q", "origin", "main");
  return git(work, "rev-parse", "HEAD");
}

describe("a git source's revisions, side by side", () => {
  it("keeps a held commit's files while the next commit is fetched, and removes them once let go", async () => {
    const dir = await tempRepo();
    const work = gitRemote(dir);
    const one = await pushed(work, "one");
    const source = new SharedSource(
      new GitSource({ url: path.join(dir, "origin.git"), branch: "main", subdirectory: "config", cacheDir: path.join(dir, "cache") }),
    );
    // one environment's run: its snapshot, held while it reads
    const first = await source.fetch();
    const release = first.hold?.();
    expect(first.commit).toBe(one);
    // another environment's fetch, after a push
    const two = await pushed(work, "two");
    source.invalidate();
    const second = await source.fetch();
    expect(second.commit).toBe(two);
    // the first run still reads its own commit, the second its own
    expect(await readFile(path.join(first.root, "v.txt"), "utf8")).toBe("one");
    expect(await readFile(path.join(second.root, "v.txt"), "utf8")).toBe("two");
    expect(first.root).not.toBe(second.root);
    release?.();
    await eventually(
      () => existsSync(first.root),
      (there) => !there,
      10_000,
    );
    // the newest stays, held or not: the next run reads it
    expect(await readFile(path.join(second.root, "v.txt"), "utf8")).toBe("two");
    await source.closeShared();
  });

  it("leaves another source's commit alone: a `gatesync plan` on the daemon's cache removes nothing the daemon reads", async () => {
    const dir = await tempRepo();
    const work = gitRemote(dir);
    await pushed(work, "one");
    const options = { url: path.join(dir, "origin.git"), branch: "main", subdirectory: "config", cacheDir: path.join(dir, "cache") };
    const daemon = new GitSource(options);
    const reading = await daemon.fetch();
    const release = reading.hold?.();
    await pushed(work, "two");
    const plan = new GitSource(options);
    expect((await plan.fetch()).root).not.toBe(reading.root);
    await plan.close();
    expect(await readFile(path.join(reading.root, "v.txt"), "utf8")).toBe("one");
    release?.();
    await daemon.close();
  });
});
