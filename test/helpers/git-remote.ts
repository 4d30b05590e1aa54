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

/**
 * An operator's gatesync.yaml over the remote `gitRemote(dir)` made (its `config/`, branch main):
 * each environment sends to its gateway and follows `track` (the text of a `track:` mapping) or
 * the top level's branch; `extra` is appended as it is.
 */
export function trackedEnvironmentsConfig(
  dir: string,
  environments: Record<string, { readonly gateway: string; readonly track?: string }>,
  extra = "",
): string {
  const entries = Object.entries(environments).map(
    ([name, e]) =>
      `  ${name}:\n    targets: { gateway: { url: ${JSON.stringify(e.gateway)}, credentialEnv: GW_KEY } }\n${e.track === undefined ? "" : `    track: ${e.track}\n`}`,
  );
  return `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: ${JSON.stringify(path.join(dir, "origin.git"))}, branch: main, subdirectory: config, cacheDir: ./cache } }
state: { backend: sqlite, path: ./state.db }
environments:
${entries.join("")}${extra}`;
}
