/**
 * The files of a git source, one directory per revision: a run reads the directory of the
 * commit it was given, and no later fetch moves a checkout under it — the environments of one
 * daemon run side by side, each seeing exactly one commit.
 *
 * A directory stays while it holds the newest revision or a reader holds it (`hold`). Each is a
 * plain directory that `git read-tree --reset -u` fills from the clone, with an index file of its
 * own beside it (`<tree>.index`), not a `git worktree`: a tree nobody reads any more becomes the
 * spare, and the next commit is checked out into it, where git writes only the files that differ
 * — a push's one file, where a new worktree writes every file and starts two more git processes
 * (docs/dev/performance.md, "Push to applied"). A tree is renamed as it is let go and as it is
 * taken, so a path only ever holds the commit it is named by: a reader too late for its commit
 * finds no directory, never another commit's files.
 *
 * Checkouts and removals take turns. Each source has a directory of its own, named by its
 * process's pid: a `gatesync plan` sharing the daemon's cache never removes what the daemon
 * reads; the directories of processes that ended are removed by the next source to check out.
 */
import { randomUUID } from "node:crypto";
import { mkdir, readdir, rename, rm } from "node:fs/promises";
import path from "node:path";
import { processAlive } from "../process-alive.js";

/** The tree directories of this process's sources (two sources of one clone in one process keep each other's). */
const inUse = new Set<string>();

/** How the trees run git in the clone. */
export interface TreeGit {
  /** `git ...args` in the clone, with `env` added to its environment (the tree's work tree and index). */
  readonly run: (args: readonly string[], env: Readonly<Record<string, string>>) => Promise<void>;
  /** `git worktree prune` under the clone's lock: the worktrees of earlier versions' trees, once removed. */
  readonly pruneWorktrees: () => Promise<void>;
}

const indexOf = (tree: string): string => `${tree}.index`;

async function removeTree(tree: string): Promise<void> {
  await rm(tree, { recursive: true, force: true });
  await rm(indexOf(tree), { force: true });
}

async function renameTree(from: string, to: string): Promise<void> {
  await rename(from, to);
  await rename(indexOf(from), indexOf(to));
}

export class RevisionTrees {
  private readonly holds = new Map<string, number>();
  private newest: string | undefined;
  /** A tree no commit names any more, kept to check the next commit out into. */
  private spare: string | undefined;
  /** The tree commands, one after another. */
  private turn: Promise<unknown> = Promise.resolve();
  private cleared = false;
  private spares = 0;

  /** This process's trees: one sub-directory per commit. */
  private readonly dir: string;

  /** Where every process's trees live. */
  private readonly top: string;

  constructor(
    top: string,
    private readonly git: TreeGit,
  ) {
    this.top = path.resolve(top);
    this.dir = path.join(this.top, `${process.pid}-${randomUUID().slice(0, 8)}`);
    inUse.add(this.dir);
  }

  /** The directory holding `commit`'s files, checked out on first use; it becomes the newest. */
  async checkout(commit: string): Promise<string> {
    const at = await this.checkedOut(commit);
    const previous = this.newest;
    this.newest = commit;
    if (previous !== undefined && previous !== commit) this.removeIfUnread(previous);
    return at;
  }

  /**
   * The directory holding `commit`'s files (an earlier revision a promotion runs), checked out
   * beside the newest without becoming it: removed once its last reader lets go. Hold it in the
   * turn it arrives in, as a fetched snapshot.
   */
  async checkoutAside(commit: string): Promise<string> {
    return this.checkedOut(commit);
  }

  /** Keeps `commit`'s files until the returned function is called (once). Take it in the turn the snapshot arrives in. */
  hold(commit: string): () => void {
    const n = this.holds.get(commit);
    // already let go: nothing to keep (a reader that came too late reads a missing directory and fails its run)
    if (n === undefined) return () => undefined;
    this.holds.set(commit, n + 1);
    let released = false;
    return () => {
      if (released) return;
      released = true;
      this.holds.set(commit, (this.holds.get(commit) ?? 1) - 1);
      this.removeIfUnread(commit);
    };
  }

  /** Waits for the removals under way; the newest tree stays on disk for the next process to remove. */
  async settled(): Promise<void> {
    await this.turn;
    inUse.delete(this.dir);
  }

  private async checkedOut(commit: string): Promise<string> {
    const at = path.join(this.dir, commit);
    if (this.holds.has(commit)) return at;
    await this.inTurn(async () => {
      // two fetches of one commit at once: the second finds it checked out (filling it again would pull it from under the first's reader)
      if (this.holds.has(commit)) return;
      await this.fill(at, commit);
      this.holds.set(commit, 0);
    });
    return at;
  }

  /** Checks `commit` out at `at`: into the spare when there is one (only what differs is written), else into a new directory. */
  private async fill(at: string, commit: string): Promise<void> {
    if (!this.cleared) {
      await this.removeLeftovers();
      await mkdir(this.dir, { recursive: true });
    }
    this.cleared = true;
    const spare = this.spare;
    this.spare = undefined;
    if (spare !== undefined) {
      try {
        await this.readTree(spare, commit);
        await renameTree(spare, at);
        return;
      } catch {
        // a spare git could not bring forward is checked out anew
        await removeTree(spare);
      }
    }
    await removeTree(at);
    await mkdir(at);
    try {
      await this.readTree(at, commit);
    } catch (err) {
      await removeTree(at);
      throw err;
    }
  }

  /** `git read-tree --reset -u`: the tree's files made `commit`'s, changes under it undone, its index beside it. */
  private readTree(tree: string, commit: string): Promise<void> {
    return this.git.run(["read-tree", "--reset", "-u", `${commit}^{tree}`], { GIT_WORK_TREE: tree, GIT_INDEX_FILE: indexOf(tree) });
  }

  /** A tree let go: renamed as the spare when there is none, else removed. */
  private removeIfUnread(commit: string): void {
    if (commit === this.newest || (this.holds.get(commit) ?? 0) > 0) return;
    this.holds.delete(commit);
    const at = path.join(this.dir, commit);
    void this.inTurn(async () => {
      if (this.spare !== undefined) return removeTree(at);
      const spare = path.join(this.dir, `.spare-${++this.spares}`);
      try {
        await renameTree(at, spare);
        this.spare = spare;
      } catch {
        await removeTree(at);
        await removeTree(spare);
      }
    }).catch(() => undefined);
  }

  /** The trees of processes that ended, and this pid's from an earlier life (a container's pid is the same at each start). */
  private async removeLeftovers(): Promise<void> {
    for (const name of await readdir(this.top).catch(() => [])) {
      const at = path.join(this.top, name);
      const pid = Number(name.split("-")[0]);
      const left = pid === process.pid ? !inUse.has(at) : !processAlive(pid);
      if (left) await rm(at, { recursive: true, force: true });
    }
    await this.git.pruneWorktrees();
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const next = this.turn.then(work, work);
    this.turn = next.catch(() => undefined);
    return next;
  }
}
