import { execFileSync } from "node:child_process";
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";
import { git } from "./git-repo.js";

/**
 * A team's repository as a daemon meets it: a bare `origin.git` in `dir` (what a git source's
 * `url` names) and a checkout of it in `dir/work` on branch `main`, where a test commits and
 * pushes. Returns the checkout's path.
 */
export function gitRemote(dir: string): string {
  const origin = path.join(dir, "origin.git");
  const work = path.join(dir, "work");
  execFileSync("git", ["init", "-q", "--bare", "-b", "main", origin]);
  execFileSync("git", ["clone", "-q", origin, work], { stdio: "ignore" });
  execFileSync("git", ["checkout", "-q", "-b", "main"], { cwd: work, stdio: "ignore" });
  return work;
}

/** Writes `files` into the working copy `work`, commits and pushes them; the new commit's SHA. */
export async function pushFiles(work: string, files: Record<string, string>, message: string): Promise<string> {
  for (const [file, text] of Object.entries(files)) {
    await mkdir(path.dirname(path.join(work, file)), { recursive: true });
    await writeFile(path.join(work, file), text);
  }
  git(work, "add", "-A");
  git(work, "commit", "-q", "-m", message);
  git(work, "push", "-q", "origin", "main");
  return git(work, "rev-parse", "HEAD");
}
