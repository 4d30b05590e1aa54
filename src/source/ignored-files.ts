/**
 * Which of a work tree's files git ignores (`git check-ignore`): a SOPS file a reference reads
 * that `.gitignore` leaves out of `git add -A` is in no commit, so no daemon reading the commit
 * finds it (validate warns: cli/validate-action.ts). Bounded: at most `maxFiles` paths asked, one
 * git process, its time and output capped; tracked files are never reported (git's default), and
 * a git that cannot answer says nothing.
 */
import path from "node:path";
import { gitOutput } from "./quiet-git.js";

const maxFiles = 1000;
const timeoutMs = 5_000;
const maxBytes = 1024 * 1024;

/** Why git ignores a file: the exclude file (as git names it, from the work tree), its line and pattern. */
export interface IgnoredBy {
  readonly source: string;
  readonly line: number;
  readonly pattern: string;
}

/** The files of `files` (absolute, inside `workTree`) git ignores there, each with the pattern that does. */
export async function ignoredByGit(files: readonly string[], workTree: string): Promise<Map<string, IgnoredBy>> {
  const asked = files.slice(0, maxFiles);
  const found = new Map<string, IgnoredBy>();
  if (asked.length === 0) return found;
  const out = await gitOutput(["check-ignore", "--verbose", "-z", "--stdin"], {
    cwd: workTree,
    env: { PATH: process.env.PATH ?? "", HOME: process.env.HOME ?? "/tmp" },
    timeoutMs,
    maxBytes,
    input: asked.map((f) => path.relative(workTree, f)).join("\0"),
    answerCodes: [1],
  }).catch(() => "");
  // -z --verbose: source, line number, pattern, path, each ended by NUL
  const fields = out.split("\0");
  for (let i = 0; i + 3 < fields.length; i += 4) {
    const [source, line, pattern, file] = [fields[i]!, fields[i + 1]!, fields[i + 2]!, fields[i + 3]!];
    // a negated pattern (`!secrets/**/*.enc.yaml`) that matched keeps the file in
    if (source === "" || pattern.startsWith("!")) continue;
    found.set(path.resolve(workTree, file), { source, line: Number(line), pattern });
  }
  return found;
}
