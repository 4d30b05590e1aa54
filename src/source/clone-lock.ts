/**
 * One writer at a time on a git source's clone, across processes: the replicas of one config
 * (docs/user/replicas.md), and a `gatesync plan` beside a daemon, share `source.git.cacheDir`,
 * and two fetches of one ref at once fail with git's `cannot lock ref` (two clones at once, one
 * removing the other's). Every command that changes the clone — clone, fetch, `gc` and
 * `worktree prune` — runs holding `<clone>.lock`, a directory made with `mkdir` (atomic), naming
 * its holder; the reads (`ls-remote`, `rev-parse`, `log`, a tree's `read-tree`, which writes only
 * the tree and its own index) take no lock.
 *
 * A holder that died (its pid no longer runs on this host), or one holding longer than the bound
 * the caller gives (a frozen process, another host on a shared volume), is stale: its lock is
 * renamed aside — only one waiter's rename succeeds — and checked to be the one judged stale
 * before it is removed (a waiter that renamed a fresh lock by mistake puts it back).
 */
import { randomUUID } from "node:crypto";
import { mkdirSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { rename, rm, stat } from "node:fs/promises";
import { hostname } from "node:os";
import path from "node:path";
import { setTimeout as sleep } from "node:timers/promises";
import { ErrorCode, SourceError } from "../errors.js";
import { KeyedTurns } from "../keyed-turns.js";
import { processAlive } from "../process-alive.js";

/** This process's turns on each clone: its own sources wait in line rather than poll. */
const turns = new KeyedTurns();

const pollMs = 40;

export interface CloneLockOptions {
  /** Longest a holder may keep the lock before it is taken for stale (and the longest a waiter waits). */
  readonly staleAfterMs: number;
}

/** Runs `work` holding the lock of the clone at `clone`. */
export function withCloneLock<T>(clone: string, opts: CloneLockOptions, work: () => Promise<T>): Promise<T> {
  return turns.run(clone, () => held(clone, opts, work));
}

async function held<T>(clone: string, opts: CloneLockOptions, work: () => Promise<T>): Promise<T> {
  const lock = `${clone}.lock`;
  const owner = `${process.pid}\n${hostname()}\n${randomUUID()}\n`;
  await acquire(lock, owner, opts);
  try {
    return await work();
  } finally {
    // only our own lock: one taken from us as stale is another's now
    if (ownerOf(lock) === owner) rmSync(lock, { recursive: true, force: true });
  }
}

/**
 * Takes the lock, waiting for its holder. The lock's own file operations are synchronous: a
 * directory and a line of text, where each thread-pool round trip of the asynchronous calls cost
 * more than the operation (~1 ms of a webhook's fetch for the ten of them).
 */
async function acquire(lock: string, owner: string, opts: CloneLockOptions): Promise<void> {
  mkdirSync(path.dirname(lock), { recursive: true });
  const deadline = Date.now() + opts.staleAfterMs + 5_000;
  for (;;) {
    try {
      mkdirSync(lock);
      writeFileSync(path.join(lock, "owner"), owner);
      return;
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== "EEXIST") throw err;
    }
    const holder = ownerOf(lock);
    if (await isStale(lock, holder, opts)) await takeAside(lock, holder);
    else if (Date.now() > deadline) {
      throw new SourceError(ErrorCode.SOURCE_FETCH, `the git cache ${path.basename(lock, ".lock")} is locked by another gatesync (${describe(holder)})`, {
        hint: `another process is fetching into source.git.cacheDir; if none runs, remove ${lock}`,
      });
    }
    await sleep(pollMs + Math.floor(Math.random() * pollMs));
  }
}

/** The owner file's text; undefined while the holder has not written it yet, or the lock is gone. */
function ownerOf(lock: string): string | undefined {
  try {
    return readFileSync(path.join(lock, "owner"), "utf8");
  } catch {
    return undefined;
  }
}

/** A holder that died, or holds too long; a lock whose holder never wrote its name (died at once) after 10 s. */
async function isStale(lock: string, holder: string | undefined, opts: CloneLockOptions): Promise<boolean> {
  const [pid, host] = (holder ?? "").split("\n");
  if (holder !== undefined && host === hostname() && !processAlive(Number(pid))) return true;
  const since = await stat(lock).then(
    (s) => s.mtimeMs,
    () => Date.now(),
  );
  return Date.now() - since > (holder === undefined ? Math.min(10_000, opts.staleAfterMs) : opts.staleAfterMs);
}

/** Moves a stale lock aside and removes it; one that is no longer the stale holder's is put back. */
async function takeAside(lock: string, holder: string | undefined): Promise<void> {
  const aside = `${lock}.stale-${randomUUID()}`;
  try {
    await rename(lock, aside);
  } catch {
    return;
  }
  if (ownerOf(aside) === holder) await rm(aside, { recursive: true, force: true });
  else await rename(aside, lock).catch(() => rm(aside, { recursive: true, force: true }));
}

function describe(holder: string | undefined): string {
  if (holder === undefined) return "its holder is starting";
  const [pid, host] = holder.split("\n");
  return `pid ${pid ?? "?"} on ${host ?? "?"}`;
}
