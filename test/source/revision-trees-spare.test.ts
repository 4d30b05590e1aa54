/**
 * A git source checks each new commit out into the tree the one before last left (the spare,
 * revision-trees.ts), writing only what differs. A model test: random histories of files added,
 * changed, removed, a file turned into a directory and back, files tampered with on disk and
 * snapshots held across fetches — after every fetch the newest tree holds exactly its commit's
 * files, a held tree keeps its own and a tree let go is gone from its path; and a file the spare
 * already held unchanged is not written again.
 */
import { existsSync, lstatSync, readFileSync, readdirSync, statSync, symlinkSync, writeFileSync } from "node:fs";
import { mkdir, rm, writeFile } from "node:fs/promises";
import { execFile } from "node:child_process";
import path from "node:path";
import { promisify } from "node:util";
import fc from "fast-check";
import { afterAll, describe, expect, it } from "vitest";
import { GitSource } from "../../src/source/git-source.js";
import { quietGit } from "../../src/source/quiet-git.js";
import { RevisionTrees } from "../../src/source/revision-trees.js";
import type { SourceSnapshot } from "../../src/source/source.js";
import { git } from "../helpers/git-repo.js";
import { gitRemote } from "../helpers/git-remote.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

/** A commit's files under `config/`, path → text. */
type Files = Record<string, string>;

const text = fc.constantFrom("one", "two", "three");
/** `d` is absent, a file, or a directory holding `d/b.yaml`: git turns one into the other. */
const commitFiles: fc.Arbitrary<Files> = fc
  .record({ a: fc.option(text), d: fc.option(fc.record({ dir: fc.boolean(), body: text })), g: fc.option(text) })
  .map(({ a, d, g }) => ({
    ...(a === null ? {} : { "a.yaml": a }),
    ...(d === null ? {} : d.dir ? { "d/b.yaml": d.body } : { d: d.body }),
    ...(g === null ? {} : { "e/f/g.yaml": g }),
    // never empty: a commit without config/ is another test's case
    "keep.yaml": "kept",
  }));

type Step = { readonly kind: "push"; readonly files: Files; readonly hold: boolean } | { readonly kind: "tamper" } | { readonly kind: "release" };
const step: fc.Arbitrary<Step> = fc.oneof(
  { weight: 4, arbitrary: fc.record({ kind: fc.constant("push" as const), files: commitFiles, hold: fc.boolean() }) },
  { weight: 1, arbitrary: fc.constant({ kind: "tamper" as const }) },
  { weight: 1, arbitrary: fc.constant({ kind: "release" as const }) },
);

/** Every file and directory under `root`: path → text, or "/" for a directory. */
function onDisk(root: string, under = ""): Files {
  const found: Files = {};
  for (const name of readdirSync(path.join(root, under))) {
    const rel = under === "" ? name : `${under}/${name}`;
    if (statSync(path.join(root, rel)).isDirectory()) Object.assign(found, { [rel]: "/" }, onDisk(root, rel));
    else found[rel] = readFileSync(path.join(root, rel), "utf8");
  }
  return found;
}

/** The files with the directories they imply, as onDisk lists them. */
function withDirectories(files: Files): Files {
  const all: Files = { ...files };
  for (const file of Object.keys(files)) {
    const parts = file.split("/");
    for (let i = 1; i < parts.length; i++) all[parts.slice(0, i).join("/")] = "/";
  }
  return all;
}

async function commit(work: string, files: Files, n: number): Promise<string> {
  await rm(path.join(work, "config"), { recursive: true, force: true });
  for (const [file, body] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(work, "config", file)), { recursive: true });
    await writeFile(path.join(work, "config", file), body);
  }
  git(work, "add", "-A");
  git(work, "commit", "-q", "--allow-empty", "-m", `step ${n}`);
  git(work, "push", "-q", "origin", "main");
  return git(work, "rev-parse", "HEAD");
}

/** `git ...args` in `cwd`, run beside whatever else the test does. */
const gitLater = async (cwd: string, ...args: string[]): Promise<void> => {
  await promisify(execFile)("git", args, { cwd });
};

interface Held {
  readonly snapshot: SourceSnapshot;
  readonly files: Files;
  readonly release: () => void;
}

describe("a git source's trees, brought forward from the spare", () => {
  it("holds exactly each commit's files, keeps held trees and removes the ones let go, whatever the history", async () => {
    let histories = 0;
    await fc.assert(
      fc.asyncProperty(fc.array(step, { minLength: 3, maxLength: 8 }), async (steps) => {
        const dir = await tempRepo();
        const work = gitRemote(dir);
        const source = new GitSource({ url: path.join(dir, "origin.git"), branch: "main", subdirectory: "config", cacheDir: path.join(dir, "cache") });
        let newest: { snapshot: SourceSnapshot; files: Files } | undefined;
        const held: Held[] = [];
        const gone: string[] = [];
        try {
          for (const [n, s] of steps.entries()) {
            if (s.kind === "tamper" && newest !== undefined) {
              // something wrote into the newest tree: a later checkout into it undoes that
              await writeFile(path.join(newest.snapshot.root, "keep.yaml"), "tampered");
              newest = { ...newest, files: { ...newest.files, "keep.yaml": "tampered" } };
              for (const [i, h] of held.entries()) if (h.snapshot.root === newest.snapshot.root) held[i] = { ...h, files: newest.files };
              continue;
            }
            if (s.kind === "release") {
              const h = held.shift();
              h?.release();
              if (h !== undefined && h.snapshot.root !== newest?.snapshot.root) gone.push(h.snapshot.root);
              continue;
            }
            if (s.kind !== "push") continue;
            const id = await commit(work, s.files, n);
            const previous = newest;
            const snapshot = await source.fetch({ announced: true });
            expect(snapshot.commit).toBe(id);
            if (previous !== undefined && previous.snapshot.root !== snapshot.root && !held.some((h) => h.snapshot.root === previous.snapshot.root))
              gone.push(previous.snapshot.root);
            newest = { snapshot, files: s.files };
            if (s.hold) held.push({ snapshot, files: s.files, release: snapshot.hold!() });
            expect(onDisk(snapshot.root)).toEqual(withDirectories(s.files));
          }
          // the held trees kept their commits' files whatever came after
          for (const h of held) if (h.snapshot.root !== newest?.snapshot.root) expect(onDisk(h.snapshot.root)).toEqual(withDirectories(h.files));
          // a tree let go is removed from its path (the spare has another name), after the turn under way
          await new Promise((r) => setTimeout(r, 50));
          for (const root of gone) if (!held.some((h) => h.snapshot.root === root) && root !== newest?.snapshot.root) expect(existsSync(root)).toBe(false);
          histories++;
        } finally {
          for (const h of held) h.release();
          await source.close();
          await rm(dir, { recursive: true, force: true });
        }
      }),
      { numRuns: 12 },
    );
    expect(histories).toBe(12);
  });

  it("keeps one spare at most: the other trees let go are removed from disk", async () => {
    const dir = await tempRepo();
    const work = gitRemote(dir);
    const source = new GitSource({ url: path.join(dir, "origin.git"), branch: "main", subdirectory: "config", cacheDir: path.join(dir, "cache") });
    try {
      const releases: (() => void)[] = [];
      let root = "";
      for (let i = 0; i < 4; i++) {
        await commit(work, { "a.yaml": `v${i}` }, i);
        const snapshot = await source.fetch({ announced: true });
        releases.push(snapshot.hold!());
        root = snapshot.root;
      }
      for (const release of releases) release();
      await source.close();
      // this source's directory: the newest tree and one spare, each with its index beside it
      const trees = path.dirname(path.dirname(root));
      expect(readdirSync(trees).sort()).toEqual(
        [path.basename(path.dirname(root)), `${path.basename(path.dirname(root))}.index`, ".spare-1", ".spare-1.index"].sort(),
      );
    } finally {
      await source.close();
    }
  });

  it("checks a commit out once when it is asked for twice at once (a promotion's beside a fetch's): the first reader's files stay", async () => {
    const dir = await tempRepo();
    const work = gitRemote(dir);
    const id = await commit(work, { "a.yaml": "one" }, 0);
    const trees = new RevisionTrees(path.join(dir, "trees"), {
      run: async (args, env) =>
        quietGit(args, { cwd: work, env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...env }, timeoutMs: 10_000 }),
      pruneWorktrees: () => Promise.resolve(),
    });
    const fetched = trees.checkout(id);
    const promoted = trees.checkoutAside(id);
    const at = await fetched;
    const release = trees.hold(id);
    // what the first reader left in its tree (a file git does not know) is there still: the tree was not removed and filled again under it
    writeFileSync(path.join(at, "reading.txt"), "first reader");
    expect(await promoted).toBe(at);
    expect(readFileSync(path.join(at, "reading.txt"), "utf8")).toBe("first reader");
    expect(readFileSync(path.join(at, "config/a.yaml"), "utf8")).toBe("one");
    release();
    await trees.settled();
  });

  it("never writes through a link a commit left in the spare: a link turned into a directory is a directory in the tree", async () => {
    const dir = await tempRepo();
    const work = gitRemote(dir);
    const outside = path.join(dir, "outside");
    await mkdir(outside);
    const source = new GitSource({ url: path.join(dir, "origin.git"), branch: "main", subdirectory: "config", cacheDir: path.join(dir, "cache") });
    try {
      // a commit whose config/d is a link out of the repository, then two whose config/d is a directory:
      // the third is checked out into the first's tree, where the link is
      await mkdir(path.join(work, "config"), { recursive: true });
      await writeFile(path.join(work, "config/keep.yaml"), "kept");
      symlinkSync(outside, path.join(work, "config/d"));
      git(work, "add", "-A");
      git(work, "commit", "-q", "-m", "a link");
      git(work, "push", "-q", "origin", "main");
      await source.fetch({ announced: true });
      await commit(work, { "keep.yaml": "kept", "d/b.yaml": "two" }, 1);
      await source.fetch({ announced: true });
      await new Promise((r) => setTimeout(r, 20));
      await commit(work, { "keep.yaml": "kept", "d/b.yaml": "three" }, 2);
      const third = await source.fetch({ announced: true });
      expect(lstatSync(path.join(third.root, "d")).isDirectory()).toBe(true);
      expect(readFileSync(path.join(third.root, "d/b.yaml"), "utf8")).toBe("three");
      expect(readdirSync(outside)).toEqual([]);
    } finally {
      await source.close();
    }
  });

  it("checks out beside a second source fetching into the same cache and git's housekeeping, each commit's files whole", async () => {
    const dir = await tempRepo();
    const work = gitRemote(dir);
    const options = { url: path.join(dir, "origin.git"), branch: "main", subdirectory: "config", cacheDir: path.join(dir, "cache") };
    const [one, two] = [new GitSource(options), new GitSource(options)];
    try {
      for (let i = 0; i < 6; i++) {
        const files = { "a.yaml": `v${i}`, [`f${i}/x.yaml`]: String(i) };
        await commit(work, files, i);
        // the second (a replica) fetches under the clone's lock, and git's housekeeping repacks (as ours does, with git's own grace period for loose objects), while the first checks out, which takes no lock
        const clone = existsSync(options.cacheDir) ? readdirSync(options.cacheDir).find((n) => !n.includes(".")) : undefined;
        const housekeeping = clone === undefined ? undefined : gitLater(path.join(options.cacheDir, clone), "gc", "--quiet");
        const [a, b] = await Promise.all([one.fetch({ announced: true }), two.fetch({ announced: true }), housekeeping]);
        expect(onDisk(a.root)).toEqual(withDirectories(files));
        expect(onDisk(b.root)).toEqual(withDirectories(files));
        expect(a.root).not.toBe(b.root);
      }
    } finally {
      await one.close();
      await two.close();
    }
  });

  it("writes a push's one changed file and leaves the others as they were on disk", async () => {
    const dir = await tempRepo();
    const work = gitRemote(dir);
    const source = new GitSource({ url: path.join(dir, "origin.git"), branch: "main", subdirectory: "config", cacheDir: path.join(dir, "cache") });
    const files = (i: number): Files => ({ "a.yaml": "same", "b.yaml": `changed ${i}`, "d/c.yaml": "same too" });
    const trees: { root: string; ino: Record<string, number> }[] = [];
    try {
      for (let i = 0; i < 4; i++) {
        await commit(work, files(i), i);
        const { root } = await source.fetch({ announced: true });
        trees.push({ root, ino: Object.fromEntries(["a.yaml", "b.yaml", "d/c.yaml"].map((f) => [f, lstatSync(path.join(root, f)).ino])) });
        await new Promise((r) => setTimeout(r, 20));
      }
      // the third commit went into the first's tree, the fourth into the second's: the unchanged files stayed
      expect(trees[2]!.ino["a.yaml"]).toBe(trees[0]!.ino["a.yaml"]);
      expect(trees[3]!.ino["d/c.yaml"]).toBe(trees[1]!.ino["d/c.yaml"]);
      expect(readFileSync(path.join(trees[3]!.root, "b.yaml"), "utf8")).toBe("changed 3");
      expect(existsSync(trees[2]!.root)).toBe(false);
    } finally {
      await source.close();
    }
  });
});
