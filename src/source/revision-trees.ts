/**
 * The files of a git source, one directory per revision (a `git worktree` of the cache's clone):
 * a run reads the directory of the commit it was given, and no later fetch moves a checkout
 * under it — the environments of one daemon run side by side, each seeing exactly one commit.
 *
 * A directory stays while it holds the newest revision or a reader holds it (`hold`); the
 * others are removed once their last reader lets go. Removals and checkouts take turns (one
 * `git worktree` command at a time on the clone). Each source has a directory of its own, named
 * by its process's pid: a `gatesync plan` sharing the daemon's cache never removes what the daemon
 * reads; the directories of processes that ended are removed by the next source to check out.
 */
import { randomUUID } from "node:crypto";
import { readdir, rm } from "node:fs/promises";
import path from "node:path";
import { processAlive } from "../process-alive.js";

/** The tree directories of this process's sources (two sources of one clone in one process keep each other's). */
const inUse = new Set<string>();

export class RevisionTrees {
  private readonly holds = new Map<string, number>();
  private newest: string | undefined;
  /** The tree commands, one after another. */
  private turn: Promise<unknown> = Promise.resolve();
  private cleared = false;

  /** This process's trees: one sub-directory per commit. */
  private readonly dir: string;

  constructor(
    /** Where every process's trees live. */
    private readonly top: string,
    /** Runs `git ...args` in the clone. */
    private readonly git: (args: readonly string[]) => Promise<void>,
  ) {
    this.dir = path.join(top, `${process.pid}-${randomUUID().slice(0, 8)}`);
    inUse.add(this.dir);
  }

  /** The directory holding `commit`'s files, checked out on first use; it becomes the newest. */
  async checkout(commit: string): Promise<string> {
    const at = path.join(this.dir, commit);
    if (!this.holds.has(commit)) {
      await this.inTurn(async () => {
        if (!this.cleared) await this.removeLeftovers();
        this.cleared = true;
        await this.git(["worktree", "add", "--detach", "--force", "--quiet", at, commit]);
      });
      this.holds.set(commit, 0);
    }
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
    const at = path.join(this.dir, commit);
    if (this.holds.has(commit)) return at;
    await this.inTurn(async () => {
      if (!this.cleared) await this.removeLeftovers();
      this.cleared = true;
      await this.git(["worktree", "add", "--detach", "--force", "--quiet", at, commit]);
    });
    this.holds.set(commit, 0);
    return at;
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

  private removeIfUnread(commit: string): void {
    if (commit === this.newest || (this.holds.get(commit) ?? 0) > 0) return;
    this.holds.delete(commit);
    void this.inTurn(async () => {
      await rm(path.join(this.dir, commit), { recursive: true, force: true });
      await this.git(["worktree", "prune"]);
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
    await this.git(["worktree", "prune"]);
  }

  private inTurn<T>(work: () => Promise<T>): Promise<T> {
    const next = this.turn.then(work, work);
    this.turn = next.catch(() => undefined);
    return next;
  }
}
