/**
 * A git repository as the source: cloned once into a cache directory, then fetched. Follows a
 * branch (force-pushes included), a tag or a pinned commit, optionally a sub-directory. Only
 * the followed ref is fetched (`followedRefspec`): a branch or tag anybody can push beside it —
 * its size, its name (one too long for the filesystem fails the whole fetch that takes it) —
 * costs the daemon nothing. Each
 * commit's files are checked out in a directory of their own, kept while a run reads them
 * (revision-trees.ts): a fetch never changes the files of a commit a run is reading.
 * Credentials travel in the environment of the git process (a token as an HTTP header, or an
 * SSH key file), never in the remote URL and never in logs.
 */
import { createHash } from "node:crypto";
import { existsSync } from "node:fs";
import { realpath, rm } from "node:fs/promises";
import { ensureDirectory } from "../ensure-directory.js";
import path from "node:path";
import { simpleGit } from "simple-git";
import type { SimpleGit } from "simple-git";
import { ErrorCode, SourceError } from "../errors.js";
import { gitTokenHeader, urlCredentials } from "../secrets/credentials.js";
import { registerSecret } from "../secrets/redaction.js";
import type { FetchRequest, Source, SourceSnapshot } from "./source.js";
import { isInside } from "../file-paths.js";
import { stripUrlCredentials } from "../secrets/credentials.js";
import { redactUrl } from "./source.js";
import { gitOutput, quietGit } from "./quiet-git.js";
import { checkBranch } from "./branch-check.js";
import type { QuietGitOptions } from "./quiet-git.js";
import { commitText } from "./commit-text.js";
import { looseCommit } from "./loose-commit.js";
import type { CommitText } from "./commit-text.js";
import { RevisionTrees } from "./revision-trees.js";
import { withCloneLock } from "./clone-lock.js";
import { fetchMatchingTags, newestTagOf } from "./newest-tag.js";

/** Characters of a commit's author or subject kept (repository text: it goes to the history and the pages). */

export interface GitSourceOptions {
  readonly url: string;
  readonly branch?: string;
  readonly tag?: string;
  /** A glob over tag names: the newest matching tag is followed (newest-tag.ts); over `branch`, under `tag` and `commit`. */
  readonly tagPattern?: string;
  readonly commit?: string;
  readonly subdirectory?: string;
  readonly cacheDir: string;
  /** An HTTPS token (the value, read from the environment by the caller). */
  readonly token?: string;
  readonly sshKeyFile?: string;
  /** Kill a git command that runs longer than this. */
  readonly timeoutMs?: number;
  /** The gatesync.yaml naming this source: an unknown branch is reported at its `branch:` line. */
  readonly configFile?: string;
}

const allowedEnvironment = ["GIT_SSH_COMMAND", "GIT_TERMINAL_PROMPT", "GIT_CONFIG_COUNT", "GIT_CONFIG_KEY_0", "GIT_CONFIG_VALUE_0"];

export class GitSource implements Source {
  readonly description: string;
  private readonly dir: string;
  private readonly env: Record<string, string>;
  /** The last snapshot: returned as is while the remote ref has not moved. */
  private last: SourceSnapshot | undefined;
  /** Each revision's files in a directory of their own (revision-trees.ts). */
  private readonly trees: RevisionTrees;
  private tidying: Promise<void> = Promise.resolve();
  /** A fetch brought objects in: git's housekeeping is due once the run reading its commit lets go (tidied). */
  private untidy = false;

  constructor(private readonly opts: GitSourceOptions) {
    const ref = opts.commit ?? opts.tag ?? (opts.tagPattern === undefined ? undefined : `the newest tag matching ${opts.tagPattern}`) ?? opts.branch ?? "HEAD";
    this.description = `git ${redactUrl(opts.url)} @ ${ref}${opts.subdirectory !== undefined && opts.subdirectory !== "." ? ` (${opts.subdirectory})` : ""}`;
    // One cache per remote and ref, so two sources never fight over a working tree.
    const key = createHash("sha256").update(`${opts.url}\0${ref}`).digest("hex").slice(0, 16);
    this.dir = path.join(opts.cacheDir, key);
    const env: Record<string, string> = { GIT_TERMINAL_PROMPT: "0" };
    // the credentials in force join the redaction layer, whoever built this source
    urlCredentials(opts.url).forEach(registerSecret);
    if (opts.token !== undefined) {
      registerSecret(opts.token);
      registerSecret(gitTokenHeader(opts.token));
      env.GIT_CONFIG_COUNT = "1";
      env.GIT_CONFIG_KEY_0 = "http.extraHeader";
      env.GIT_CONFIG_VALUE_0 = `Authorization: Basic ${gitTokenHeader(opts.token)}`;
    }
    if (opts.sshKeyFile !== undefined) {
      env.GIT_SSH_COMMAND = `ssh -i '${opts.sshKeyFile.replace(/'/g, "'\\''")}' -o IdentitiesOnly=yes -o BatchMode=yes -o StrictHostKeyChecking=accept-new`;
    }
    this.env = env;
    // a tree's checkout reads the clone and writes only its own index: no lock (git's readers are safe beside a fetch or gc)
    this.trees = new RevisionTrees(`${this.dir}.trees`, {
      run: async (args, env) => {
        const options = this.gitOptions;
        return quietGit(args, { ...options, env: { ...options.env, ...env } });
      },
      pruneWorktrees: async () => this.locked(async () => this.quiet(["worktree", "prune"])),
    });
  }

  private git(baseDir?: string): SimpleGit {
    return simpleGit({
      ...(baseDir === undefined ? {} : { baseDir }),
      allowEnvironment: allowedEnvironment,
      timeout: { block: this.opts.timeoutMs ?? 120_000 },
    }).env(this.processEnv());
  }

  /** git run without simple-git (quiet-git.ts): in the checkout, with the same environment and time limit as simple-git's. */
  private get gitOptions(): QuietGitOptions {
    return { cwd: this.dir, env: this.processEnv(), timeoutMs: this.opts.timeoutMs ?? 120_000 };
  }

  /** `work` holding the clone's lock (clone-lock.ts): the replicas of one config share the cache. */
  private locked<T>(work: () => Promise<T>): Promise<T> {
    return withCloneLock(this.dir, { staleAfterMs: 2 * (this.opts.timeoutMs ?? 120_000) }, work);
  }

  /** The commands that print nothing (see quiet-git.ts). */
  private quiet(args: readonly string[]): Promise<void> {
    return quietGit(args, this.gitOptions);
  }

  private processEnv(): Record<string, string> {
    return { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp", ...this.env };
  }

  async fetch(request: FetchRequest = {}): Promise<SourceSnapshot> {
    try {
      // one `ls-remote` spares a fetch when nothing moved; after an announced push it is a git process spent for nothing
      if (this.last !== undefined && request.announced !== true && (await this.unchanged(this.last))) return this.last;
      await ensureDirectory(this.opts.cacheDir);
      const { commit, tag, skippedTags, told, fetched } = await this.locked(async () => {
        if (!existsSync(path.join(this.dir, ".git"))) {
          await rm(this.dir, { recursive: true, force: true });
          // the remote's default branch alone (its HEAD: a source naming no branch follows it), no tag
          await this.git().clone(this.opts.url, this.dir, ["--no-checkout", "--quiet", "--single-branch", "--no-tags"]);
        }
        return this.fetchFollowed(this.git(this.dir));
      });
      const git = this.git(this.dir);
      const chosenBy = { ...(tag === undefined ? {} : { tag }), ...(skippedTags === undefined ? {} : { skippedTags }) };
      // the fetch found the commit already checked out (an announced push that moved nothing)
      if (this.last?.commit === commit) {
        const { tag: _tag, skippedTags: _skipped, ...last } = this.last;
        const same = tag === this.last.tag && JSON.stringify(skippedTags) === JSON.stringify(this.last.skippedTags);
        return this.tidied(same ? this.last : (this.last = { ...last, ...chosenBy }), fetched);
      }
      const snapshot = await this.snapshotOf(git, commit, await this.trees.checkout(commit), told);
      this.last = { ...snapshot, ...chosenBy };
      return this.tidied(this.last, fetched);
    } catch (err) {
      if (err instanceof SourceError) throw err;
      // a branch the remote does not have: said with the remote's branches (a SourceError), not as git's failed fetch
      if (this.followsBranch && this.opts.branch !== undefined && /couldn't find remote ref/i.test((err as Error).message))
        await checkBranch(this.opts.branch, this.opts.url, this.gitOptions, this.opts.configFile);
      // git's own message may quote the URL, in its own form: no user information of any URL survives
      const message = stripUrlCredentials((err as Error).message.split(this.opts.url).join(redactUrl(this.opts.url)))
        .split("\n")
        .filter((l) => l.trim() !== "")
        .slice(0, 3)
        .join(" ");
      throw new SourceError(ErrorCode.SOURCE_FETCH, `cannot fetch ${this.description}: ${message}`, {
        hint: "check the URL, the ref and the credentials; the last good commit stays applied",
      });
    }
  }

  /** Following a branch (named, or the remote's default): no pinned commit, tag or tag pattern. */
  private get followsBranch(): boolean {
    return this.opts.commit === undefined && this.opts.tag === undefined && this.opts.tagPattern === undefined;
  }

  /**
   * Fetches what the source follows and reads its commit (a tag pattern's newest tag, with its
   * name); a followed ref's commit comes with its author and subject, read from the files the
   * fetch wrote (loose-commit.ts) or else from one git process (a webhook's run waits for each:
   * docs/dev/performance.md, "Push to applied").
   */
  private async fetchFollowed(
    git: SimpleGit,
  ): Promise<{ commit: string; tag?: string; skippedTags?: readonly string[]; told?: CommitText; fetched?: boolean }> {
    const followed = await this.followedRef(git);
    if ("pattern" in followed) return this.newestTag(followed.pattern);
    // Forced refspecs: a force-pushed branch replaces what was fetched before.
    // git's housekeeping after a fetch (`gc --auto`, a process of its own) runs once the run reading the commit lets go of it (tidied)
    if (followed.fetch !== undefined) await this.quiet(["fetch", "--force", "--prune", "--no-tags", "--quiet", "--no-auto-gc", "origin", followed.fetch]);
    // what the fetch just wrote, read from its files when git left them loose (loose-commit.ts), else from git
    const loose = followed.fetch === undefined || !followed.local.startsWith("refs/") ? undefined : looseCommit(path.join(this.dir, ".git"), followed.local);
    if (loose !== undefined) return { ...loose, fetched: true };
    const out = await gitOutput(["log", "-1", "--no-show-signature", "--format=%H%x00%an%x00%s", `${followed.local}^{commit}`, "--"], this.gitOptions);
    const nul = out.indexOf("\0");
    const commit = out.slice(0, nul < 0 ? undefined : nul).trim();
    if (!/^[0-9a-f]{40,64}$/.test(commit)) throw new Error(`git log named no commit for ${followed.local}`);
    return { commit, told: commitText(out.slice(nul + 1)), fetched: followed.fetch !== undefined };
  }

  /**
   * The ref followed: what a fetch takes (`fetch`, a refspec) and where the commit is then read
   * (`local`). The branch or tag alone; for a pinned commit, nothing when the clone holds it
   * already (the default branch's history), else every branch (it may be on any). A tag pattern
   * is fetched otherwise: the matching tags' objects by id, as the newest is chosen (newest-tag.ts).
   */
  private async followedRef(git: SimpleGit): Promise<{ readonly fetch?: string; readonly local: string } | { readonly pattern: string }> {
    const { commit, tag, tagPattern } = this.opts;
    if (commit !== undefined) {
      const held = await git.raw(["cat-file", "-e", `${commit}^{commit}`]).then(
        () => true,
        () => false,
      );
      return { ...(held ? {} : { fetch: "+refs/heads/*:refs/remotes/origin/*" }), local: commit };
    }
    if (tag !== undefined) return { fetch: `+refs/tags/${tag}:refs/tags/${tag}`, local: `refs/tags/${tag}` };
    if (tagPattern !== undefined) return { pattern: tagPattern };
    const branch = this.opts.branch ?? (await this.defaultBranch(git));
    return { fetch: `+refs/heads/${branch}:refs/remotes/origin/${branch}`, local: `refs/remotes/origin/${branch}` };
  }

  /** The newest of the remote's tags matching the pattern (newest-tag.ts); the name is only reported, never given to git. */
  private async newestTag(pattern: string): Promise<{ commit: string; tag: string; skippedTags?: readonly string[] }> {
    const tags = await fetchMatchingTags(pattern, this.gitOptions);
    const { tag: newest, skipped } = newestTagOf(tags, pattern);
    if (newest === undefined)
      throw new SourceError(ErrorCode.SOURCE_INVALID, `no tag of ${redactUrl(this.opts.url)} matches \`${pattern}\``, {
        hint: `push a tag matching it (\`git tag ${pattern.replaceAll("*", "1.0.0").replaceAll("?", "1")} && git push --tags\`), or change the environment's \`track: { tag: … }\``,
      });
    return { commit: newest.commit, tag: newest.name, ...(skipped.length === 0 ? {} : { skippedTags: skipped.slice(0, 10) }) };
  }

  /**
   * A commit the clone holds (a revision an environment was promoted to), beside the newest:
   * checked as a fetched one is (its sub-directory, inside the checkout).
   */
  async at(commit: string): Promise<SourceSnapshot> {
    if (!/^[0-9a-f]{40}$/.test(commit)) throw new SourceError(ErrorCode.SOURCE_INVALID, `${JSON.stringify(commit.slice(0, 80))} is not a full commit id`);
    if (this.last?.commit === commit) return this.last;
    const git = this.git(this.dir);
    await git.revparse([`${commit}^{commit}`]).catch(() => {
      throw new SourceError(ErrorCode.SOURCE_FETCH, `commit ${commit.slice(0, 12)} is not in ${this.description}`, {
        hint: "a promoted revision must be a commit of the repository the daemon fetches",
      });
    });
    return this.snapshotOf(git, commit, await this.trees.checkoutAside(commit));
  }

  /** A commit checked out in `tree`: its sub-directory there (existing, inside), who wrote it, and a hold on the tree. */
  private async snapshotOf(git: SimpleGit, commit: string, tree: string, known?: CommitText): Promise<SourceSnapshot> {
    const root = path.resolve(tree, this.opts.subdirectory ?? ".");
    if (!existsSync(root))
      throw new SourceError(ErrorCode.SOURCE_INVALID, `the sub-directory ${this.opts.subdirectory ?? "."} does not exist at ${commit.slice(0, 12)}`);
    await this.contain(root, tree, commit);
    const told = known ?? (await this.authorAndSubject(git, commit));
    const hold = (): (() => void) => {
      const release = this.trees.hold(commit);
      return () => {
        release();
        // the newest fetched commit's reader ended; letting go of an older one (a newer one is being read) is not the moment
        if (this.last?.commit === commit) this.tidy();
      };
    };
    return { root, boundary: tree, revision: commit, commit, ...told, hold };
  }

  /** The real path of the sub-directory (links anywhere along it resolved) must stay inside the checkout. */
  private async contain(root: string, tree: string, commit: string): Promise<void> {
    const realRoot = await realpath(root);
    const realDir = await realpath(tree);
    if (isInside(root, tree) && isInside(realRoot, realDir)) return;
    throw new SourceError(ErrorCode.PATH_ESCAPE, `the sub-directory ${this.opts.subdirectory ?? "."} leads outside the repository at ${commit.slice(0, 12)}`, {
      hint: "a symbolic link (or `..`) in the sub-directory's path points outside the checkout: nothing is read or applied from this commit",
    });
  }

  /** Who wrote the commit and its subject line, for the history; nothing when git cannot say. */
  private async authorAndSubject(git: SimpleGit, commit: string): Promise<{ author?: string; subject?: string }> {
    const out = await git.raw(["log", "-1", "--no-show-signature", "--format=%an%x00%s", commit]).catch(() => undefined);
    return out === undefined ? {} : commitText(out);
  }

  /** One `ls-remote`: has the followed ref stayed at the last commit? (A pinned commit always has.) */
  async commitsBetween(from: string, to: string): Promise<number | undefined> {
    if (!/^[0-9a-f]{7,64}$/.test(from) || !/^[0-9a-f]{7,64}$/.test(to)) return undefined;
    try {
      const n = Number((await this.git(this.dir).raw(["rev-list", "--count", `${from}..${to}`])).trim());
      return Number.isInteger(n) && n >= 0 ? n : undefined;
    } catch {
      // the applied commit is gone from the history (force-push): unknown
      return undefined;
    }
  }

  private async unchanged(last: SourceSnapshot): Promise<boolean> {
    if (this.opts.commit !== undefined) return true;
    // a pattern's newest tag is known once the tags are fetched: nothing to ask the remote first
    if (this.opts.tagPattern !== undefined && this.opts.tag === undefined) return false;
    if (this.opts.branch === undefined && this.opts.tag === undefined) return false;
    const ref = this.opts.tag !== undefined ? `refs/tags/${this.opts.tag}` : `refs/heads/${this.opts.branch}`;
    const out = await this.git(this.dir).listRemote(["origin", ref, `${ref}^{}`]);
    const lines = out
      .trim()
      .split("\n")
      .map((l) => l.split("\t"));
    const peeled = lines.find(([, r]) => r === `${ref}^{}`) ?? lines.find(([, r]) => r === ref);
    return peeled?.[0] === last.commit;
  }

  private async defaultBranch(git: SimpleGit): Promise<string> {
    const head = await git.raw(["symbolic-ref", "--quiet", "--short", "refs/remotes/origin/HEAD"]).catch(() => "origin/main");
    return head.trim().replace(/^origin\//, "");
  }

  /**
   * `snapshot`; when it was `fetched`, git's housekeeping after a fetch (`gc --auto`: packs the
   * loose objects of many fetches) is due, and starts when a reader of a snapshot lets go of it
   * (the run that fetched it ended) or the source closes: starting a git process holds Node's
   * loop for ~3 ms, and git's own process takes a core — a webhook's run waited for both
   * (docs/dev/performance.md, "Push to applied").
   */
  private tidied(snapshot: SourceSnapshot, fetched = false): SourceSnapshot {
    if (fetched) this.untidy = true;
    return snapshot;
  }

  /** The housekeeping due (tidied), started under the clone's lock. */
  private tidy(): void {
    if (!this.untidy) return;
    this.untidy = false;
    this.tidying = this.tidying.then(async () => this.locked(async () => this.quiet(["gc", "--auto", "--quiet"]))).catch(() => undefined);
  }

  async close(): Promise<void> {
    // the cache stays for the next start; the trees no run reads are removed first
    this.tidy();
    await this.tidying;
    await this.trees.settled();
  }
}
