/**
 * A followed branch the remote does not have (git's "couldn't find remote ref"): said as the
 * user's typo, with the remote's branches and the nearest name, located in gatesync.yaml.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { closest } from "fastest-levenshtein";
import { ErrorCode, SourceError } from "../errors.js";
import { isInside } from "../file-paths.js";
import { Locator } from "../load/yaml-locator.js";
import { similar } from "../text/similar.js";
import { gitOutput } from "./quiet-git.js";
import type { QuietGitOptions } from "./quiet-git.js";
import { redactUrl } from "./source.js";

/** Bytes of the remote's branch listing read for an unknown branch's hint (some 20,000 branches). */
const maxBranchListingBytes = 2 * 1024 * 1024;

/**
 * An unknown branch is the user's typo, not git's "couldn't find remote ref": said with the
 * remote's branches (listed by `ls-remote`, bounded: nothing else of the remote is fetched).
 */
export async function checkBranch(branch: string, url: string, git: QuietGitOptions, configFile?: string): Promise<void> {
  const refs = await gitOutput(["ls-remote", "--heads", "origin"], { ...git, maxBytes: maxBranchListingBytes }).catch(() => undefined);
  // the remote cannot be listed either: git's own failure says more
  if (refs === undefined) return;
  const branches = refs
    .split("\n")
    .map((line) => line.slice(line.indexOf("\t") + 1).replace(/^refs\/heads\//, ""))
    .filter((b) => b !== "");
  if (branches.includes(branch)) return;
  const near = branches.length === 0 ? undefined : closest(branch, branches);
  const listed = branches.length > 20 ? `${branches.slice(0, 20).join(", ")} … (${branches.length} in all)` : branches.join(", ");
  throw new SourceError(ErrorCode.SOURCE_INVALID, `the branch \`${branch}\` does not exist in ${redactUrl(url)}`, {
    hint: `${near !== undefined && similar(near, branch) ? `did you mean \`${near}\`? ` : ""}${branches.length === 0 ? "the repository has no branch yet" : `its branches: ${listed}`}; set source.git.branch in gatesync.yaml`,
    ...(configFile === undefined ? {} : { location: branchLocation(configFile) }),
  });
}

/** Where gatesync.yaml sets `source.git.branch`. */
function branchLocation(configFile: string): { file: string; line?: number; column?: number; path: string } {
  const at = new Locator((f) => {
    try {
      return readFileSync(f, "utf8");
    } catch {
      return undefined;
    }
  }).locate(configFile, 0, ["source", "git", "branch"]);
  // named as the user named it: from the working directory when it lies below it
  const shown = isInside(path.resolve(configFile), process.cwd()) ? path.relative(process.cwd(), path.resolve(configFile)) : configFile;
  return { file: shown, ...at, path: "source.git.branch" };
}
