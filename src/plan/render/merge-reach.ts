/**
 * What a merge does to an environment, said per environment in the merge-request comment
 * (docs/user/merge-requests.md): it reaches it at once (the environment follows the branch the
 * merge request targets), waits for a promotion from another environment, reaches it when
 * tagged, or does not reach it (another branch, a pinned commit).
 */
import type { FollowedRef } from "../../config/track-section.js";
import { codeSpan } from "./markdown-inline.js";

/** The sentence for an environment that follows `follows`, for a merge into `target` (the CI's target branch, when it says). */
export function mergeReach(follows: FollowedRef, target: string | undefined): string {
  if ("promotedFrom" in follows) return `waits for promotion from ${codeSpan(follows.promotedFrom)}`;
  if ("tag" in follows) return `reaches it when tagged: it applies the newest tag matching ${codeSpan(follows.tag)}`;
  if ("commit" in follows) return `does not reach it: it is pinned to commit ${codeSpan(follows.commit.slice(0, 12))}`;
  if ("defaultBranch" in follows) return "reaches it at once when merged into the default branch, which it follows";
  if (target === undefined) return `reaches it at once when merged into ${codeSpan(follows.branch)}, which it follows`;
  return target === follows.branch
    ? `reaches it at once (it follows ${codeSpan(follows.branch)})`
    : `does not reach it: it follows ${codeSpan(follows.branch)}, not ${codeSpan(target)}`;
}

/** The branch a merge request targets, as the CI says it (GitHub Actions, GitLab CI); undefined elsewhere. */
export function targetBranchOf(env: Readonly<Record<string, string | undefined>>): string | undefined {
  const named = [env.GITHUB_BASE_REF, env.CI_MERGE_REQUEST_TARGET_BRANCH_NAME].find((v) => v !== undefined && v !== "");
  // the CI's text: bounded, as a branch name is
  return named !== undefined && named.length <= 200 ? named : undefined;
}
