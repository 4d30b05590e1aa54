/**
 * While the newest commit is refused (it does not validate), the pages describe the last good
 * commit — what the servers and the state hold — and say that a newer one is refused, with a
 * link to its errors: nothing of the repository has gone, the run just applies nothing.
 */
import { html, plural, shortCommit } from "./html.js";
import type { Html } from "./html.js";
import type { View } from "./view.js";

export interface RefusedCommit {
  /** The refused commit (or the revision of a directory source). */
  readonly commit: string | undefined;
  readonly errors: number;
  /** The run of this daemon that refused it, when it has run. */
  readonly run: number | undefined;
  /** The last good commit: in force, as the state records it. */
  readonly inForce: string | undefined;
}

export function refusedCommitOf(view: View): RefusedCommit | undefined {
  if (view.preview.kind !== "invalid") return undefined;
  const head = view.reconciler.lastSnapshot;
  const refusing = view.history.entries().find((e) => e.record.outcome === "invalid" && e.record.revision === head?.revision);
  return {
    commit: head?.commit ?? head?.revision,
    errors: view.preview.diagnostics.filter((d) => d.severity === "error").length,
    run: refusing?.seq,
    inForce: view.history.lastSuccess()?.commit ?? view.history.lastSuccess()?.revision,
  };
}

/** The notice: which commit is refused, where its errors are, and which commit is in force. */
export function refusedNotice(r: RefusedCommit, root: string): Html {
  const run = r.run === undefined ? "" : html`, run <a href="${root}runs#run-${String(r.run)}">#${String(r.run)}</a>`;
  const inForce =
    r.inForce === undefined
      ? "No commit has been applied in full by this daemon yet: the records below are what the state holds."
      : html`What is shown is the last good commit, <code>${shortCommit(r.inForce)}</code>, as the state records it.`;
  return html`<p class="error" data-refused-commit>A newer commit, <code>${shortCommit(r.commit)}</code>, is refused: it does not validate (<a href="${root}plan">${plural(r.errors, "error")}</a>${run}). Nothing is applied until a commit validates. ${inForce}</p>`;
}
