/** Who wrote a commit and its subject line, as the history keeps them (bounded, no control characters). */
import { boundText } from "../text/bounded-text.js";

const maxCommitTextChars = 200;

/** Who wrote a commit and its subject line, for the history. */
export interface CommitText {
  readonly author?: string;
  readonly subject?: string;
}

/** `%an%x00%s` as git printed it; nothing when it is not that. */
export function commitText(out: string): CommitText {
  const nul = out.indexOf("\0");
  if (nul < 0) return {};
  return { author: boundText(out.slice(0, nul), maxCommitTextChars), subject: boundText(out.slice(nul + 1).replace(/\n$/, ""), maxCommitTextChars) };
}
