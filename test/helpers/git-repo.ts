import { execFileSync } from "node:child_process";
import path from "node:path";
import { tempRepo } from "./temp-repo.js";

/** Runs git in `cwd` with a throw-away identity. */
export const git = (cwd: string, ...args: string[]): string =>
  execFileSync("git", ["-c", "user.email=t@example.com", "-c", "user.name=t", ...args], { cwd, encoding: "utf8", stdio: ["ignore", "pipe", "pipe"] }).trim();

/** A temporary directory holding `files`, committed as one commit on `main`; returns it and the commit. */
export async function committedRepo(files: Record<string, string>): Promise<{ dir: string; commit: string }> {
  const dir = await tempRepo(files);
  git(dir, "init", "-q", "-b", "main");
  git(dir, "add", "-A");
  git(dir, "commit", "-q", "-m", "initial");
  return { dir, commit: git(dir, "rev-parse", "HEAD") };
}

/** A gatesync.yaml whose source is the git repository at `url` (a local path), for tests. */
export const gitSourceConfig = (url: string, cacheDir: string, subdirectory = "config"): string =>
  `apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source: { git: { url: ${JSON.stringify(url)}, branch: main, subdirectory: ${subdirectory}, cacheDir: ${JSON.stringify(path.resolve(cacheDir))} } }
targets:
  gateway: { url: http://127.0.0.1:1, credentialEnv: GW_KEY }
state: { backend: sqlite, path: ./state.db }
`;
