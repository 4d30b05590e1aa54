/**
 * Which revisions an environment promoted from another may take, and why one may not
 * (docs/user/promotion.md): a *candidate* is a revision the source environment verified
 * (verification.ts); the reason names the gate a revision did not pass in the source — never
 * applied there, failed there (which check), still soaking (how long is left), or left before its
 * soak ended. Pure: the daemon reads the rows and the clock and hands them in.
 */
import { soakEndsAt, streakOf } from "./verification.js";
import type { RunFact } from "./verification.js";

/** A verification row of the source, as the rules read it. */
export interface Verified {
  readonly revision: string;
  /** When its soak ended (ms since the epoch). */
  readonly at: number;
}

/** What the source environment's state says: its verifications that stand, those withdrawn, and its runs, newest first. */
export interface SourceView {
  readonly name: string;
  readonly soakMs: number;
  readonly verified: readonly Verified[];
  /** Revisions whose verification was withdrawn by a later failing run (and not granted again since). */
  readonly withdrawn?: ReadonlyArray<{ readonly revision: string; readonly at: number; readonly reason: string }>;
  readonly runs: readonly RunFact[];
}

/** A revision as messages and commands show it: its first 12 hex digits. */
export const shortRevision = (revision: string): string => revision.slice(0, 12);

/** Why `revision` is not a candidate (undefined: it is one, the source verified it). */
export function gateRefusal(revision: string, source: SourceView, now: number): string | undefined {
  if (source.verified.some((v) => v.revision === revision)) return undefined;
  const from = source.name;
  const streak = streakOf(source.runs);
  if (streak?.revision === revision) {
    const left = Math.max(0, Math.ceil((soakEndsAt(streak, source.soakMs) - now) / 1000));
    return left > 0
      ? `${shortRevision(revision)} is soaking in ${from}: ${left}s of its soak left`
      : `${shortRevision(revision)} ended its soak in ${from}; verified at its next run`;
  }
  const withdrawn = source.withdrawn?.find((w) => w.revision === revision);
  if (withdrawn !== undefined)
    return `${shortRevision(revision)}'s verification in ${from} was withdrawn at ${new Date(withdrawn.at).toISOString()}: ${withdrawn.reason}`;
  const last = source.runs.find((r) => r.revision === revision && r.verdict !== "neutral");
  if (last === undefined) return `${shortRevision(revision)} was not applied in ${from}`;
  if (last.verdict === "failed") return `${shortRevision(revision)} failed in ${from}: ${last.problem ?? "the run failed"}`;
  return `${from} left ${shortRevision(revision)} before its soak ended`;
}

/** The candidate a promotion without a revision takes: the source's newest verification. */
export const newestCandidate = (source: SourceView): Verified | undefined => source.verified[0];

/**
 * What `promotion: auto` promotes next: the source's newest verification when it is newer than
 * the promotion in force and of another revision (after a rollback, later candidates wait until
 * the source verifies one after it).
 */
export function autoCandidate(source: SourceView, inForce: { readonly revision: string; readonly at: number } | undefined): Verified | undefined {
  const newest = newestCandidate(source);
  if (newest === undefined) return undefined;
  if (inForce === undefined) return newest;
  return newest.revision !== inForce.revision && newest.at > inForce.at ? newest : undefined;
}

/** What the source judged of a revision: the resources its plan at that revision held (its selection), and how its state left them. */
export interface SourceSelection {
  /** Every resource the source's plan at the revision holds, whatever its action: what its selection took in. */
  readonly judged: ReadonlySet<string>;
  /** Resources the source's state records as applied. */
  readonly applied: ReadonlySet<string>;
  /** Resources whose post-apply checks fail in the source, with why. */
  readonly failing: ReadonlyMap<string, string>;
}

/** Names listed in one refusal; the rest are counted. */
const maxNamed = 10;

const listed = (items: readonly string[]): string =>
  items.length <= maxNamed ? items.join("; ") : `${items.slice(0, maxNamed).join("; ")}; and ${items.length - maxNamed} more`;

/**
 * The gate judges what the target will get: every resource the target's plan at `revision`
 * would change (`changed`) must have been in the source's selection at that revision, applied
 * there and checked healthy (an orphan — a resource the revision no longer declares — in its selection) — the same identities; values may differ by design. A commit that
 * narrows the source's selection (a team `selector`) does not verify what it leaves out.
 * Undefined: nothing the target would change escaped the source.
 */
export function selectionRefusal(
  revision: string,
  from: string,
  changed: ReadonlyArray<{ readonly id: string; readonly orphan: boolean }>,
  source: SourceSelection,
): string | undefined {
  const at = shortRevision(revision);
  const problems = changed.flatMap(({ id, orphan }) => {
    if (!source.judged.has(id)) return [`${id} was outside ${from}'s selection at ${at}`];
    // a resource the revision no longer declares: the source judged it too (it has no values to check)
    if (orphan) return [];
    if (!source.applied.has(id)) return [`${id} was not applied in ${from} at ${at}`];
    const failing = source.failing.get(id);
    return failing === undefined ? [] : [`${id}'s post-apply check fails in ${from}: ${failing}`];
  });
  return problems.length === 0 ? undefined : `${listed(problems)} (${from} did not apply and check what ${at} changes here)`;
}
