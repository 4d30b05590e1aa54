import { execFileSync } from "node:child_process";
import path from "node:path";

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
