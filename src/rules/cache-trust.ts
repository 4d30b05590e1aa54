/**
 * Whether the findings cache may be trusted in this run. Its entries are data, checked for shape,
 * but an entry with the right key and no findings is well-formed: committed into the repository
 * (a merge request adding `.gatesync/rules-cache/<key>.json`), it would hide a file's findings —
 * an error rule passed without being run. Entries this machine wrote are untracked; when git
 * tracks anything in the cache directory, the cache is left alone for the run and it says why.
 */
import { execFileSync } from "node:child_process";
import path from "node:path";
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { toPosix } from "../file-paths.js";

export type CacheTrust = { readonly trusted: true } | { readonly trusted: false; readonly warning: Diagnostic };

/**
 * Whether git tracks files inside `dir`, by its exit status alone (`--error-unmatch`: 0 when
 * some file matches, 1 when none does), so that no number of tracked files can overflow a
 * buffer; "none" outside a git work tree or without git.
 */
function trackedInside(dir: string): "none" | "some" | "unknown" {
  try {
    execFileSync("git", ["ls-files", "--error-unmatch", "--", dir], {
      cwd: path.dirname(dir),
      stdio: ["ignore", "ignore", "pipe"],
      timeout: 5_000,
      env: { ...process.env, LC_ALL: "C" },
    });
    return "some";
  } catch (err) {
    const e = err as { code?: string; status?: number; stderr?: Buffer };
    // in English whatever the user's locale (LC_ALL=C above): its messages are matched
    const said = e.stderr?.toString() ?? "";
    if (e.status === 1 && /did not match any file/i.test(said)) return "none";
    // no git, or a directory no git work tree holds: nothing can have been committed into it
    if (e.code === "ENOENT") return "none";
    if (e.status === 128 && /not a git repository/i.test(said)) return "none";
    return "unknown";
  }
}

/** The cache directory's trust for this run (`dir` need not exist). */
export function findingsCacheTrust(dir: string): CacheTrust {
  // a directory that does not exist (cwd missing: ENOENT) holds nothing git could have put there
  const found = trackedInside(dir);
  if (found === "none") return { trusted: true };
  const where = toPosix(path.relative(process.cwd(), dir)) || ".";
  return {
    trusted: false,
    warning: {
      severity: "warning",
      code: ErrorCode.RULES_CACHE_TRACKED,
      file: where,
      message:
        found === "some"
          ? "git tracks files in the rules' findings cache: a commit could carry entries that hide findings, so the cache is not used in this run"
          : "git could not say whether it tracks files in the rules' findings cache, so the cache is not used in this run",
      hint:
        found === "some"
          ? "delete it from git and from the work tree (git rm -r .gatesync/rules-cache) and list .gatesync/ in .gitignore: the next run lints every file and writes it anew"
          : "check that git works in this directory (git ls-files .gatesync/rules-cache), or turn the cache off (GATESYNC_RULES_CACHE=off)",
    },
  };
}
