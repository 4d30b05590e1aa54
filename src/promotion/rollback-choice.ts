/**
 * Which revision a promotion or rollback asks for (docs/user/promotion.md): a commit id or its
 * prefix among the revisions the rows name (several matching is an error listing them); a
 * rollback's `--steps N` counted back along the environment's applied history and `--to`
 * placed against it (promote/rollback.ts) — a revision not before the one in force is refused
 * unless the operator says `--forward`; a promotion without a revision takes the newest candidate,
 * says when a newer one is soaking, and refuses to quietly take back what a rollback left.
 */
import { ErrorCode, PromotionError } from "../errors.js";
import { commandFor, printedCommand } from "../printed-commands.js";
import { gateRefusal, newestCandidate, shortRevision } from "./gates.js";
import type { SourceView } from "./gates.js";
import { placeOf, rollbackTargets } from "./rollback.js";
import type { Lineage } from "./rollback.js";
import { streakOf } from "./verification.js";

/** A rollback as asked: `--steps N`, or `--to` (the ask's revision), and `--forward`. */
export interface RollbackAsk {
  readonly steps?: number;
  readonly forward?: boolean;
}

/** What a rollback goes to: the revision, the entry it restores (a step back), or on top (`--forward`). */
export interface RollbackChoice {
  readonly revision: string;
  readonly restores?: number;
  readonly forward?: boolean;
}

const plural = (n: number, word: string): string => `${n} ${word}${n === 1 ? "" : "s"}`;

/**
 * A commit id or prefix as the one revision of `known` it names (a full id, or one no row names,
 * stays as given); several matching: an error whose hint is the command `retry` builds for each.
 */
export function resolveRevision(asked: string, known: Iterable<string>, retry: (revision: string) => string): string {
  if (!/^[0-9a-f]{4,40}$/.test(asked))
    throw new PromotionError(`${JSON.stringify(asked.slice(0, 80))} is not a commit id`, { hint: "give a commit id (at least 4 hex digits)" });
  const matching = [...new Set([...known].filter((r) => r.startsWith(asked)))];
  if (matching.length > 1)
    throw new PromotionError(
      `${asked} is the start of ${plural(matching.length, "revision")}: ${matching.slice(0, 10).map(shortRevision).join(", ")}${matching.length > 10 ? ", …" : ""}`,
      {
        hint: `name one by 12 digits: ${matching
          .slice(0, 3)
          .map((r) => `\`${retry(shortRevision(r))}\``)
          .join(" or ")}${matching.length > 3 ? " …" : ""}`,
      },
      ErrorCode.PROMOTION_AMBIGUOUS,
    );
  return matching[0] ?? asked;
}

/** The revisions a view's rows name. */
export const knownRevisions = (view: SourceView): string[] => [...view.verified.map((v) => v.revision), ...view.runs.flatMap((r) => r.revision ?? [])];

/** `--steps N`: the N-th rollback target, or why there is none. */
function stepsBack(name: string, lineage: Lineage, view: SourceView, steps: number): RollbackChoice {
  const verified = new Set(view.verified.map((v) => v.revision));
  const targets = rollbackTargets(lineage, (r) => verified.has(r));
  const target = targets[steps - 1];
  if (target === undefined)
    throw new PromotionError(
      `${name} has ${plural(targets.length, "earlier revision")} it applied and verified before the one in force: cannot go ${steps} back`,
      { hint: `see where each --steps goes: \`${commandFor(printedCommand("history"), { env: name })}\`` },
    );
  return { revision: target.revision, restores: target.seq };
}

/** `--to revision`: an earlier entry of the lineage, or (only with `--forward`) anywhere else. */
function toRevision(name: string, lineage: Lineage, revision: string, forward: boolean): RollbackChoice | "in-force" {
  const place = placeOf(lineage, revision);
  if (place.place === "in-force") return "in-force";
  if (place.place === "earlier") return { revision, restores: place.seq };
  if (forward) return { revision, forward: true };
  const short = shortRevision(revision);
  const why =
    place.place === "newer"
      ? `${short} is newer than the revision in force: a rollback left it`
      : place.place === "off-lineage"
        ? `${short} is not before the revision in force in ${name}'s history: a rollback left it before a later promotion`
        : `${name} never applied ${short}: it is not in its history`;
  const hint =
    place.place === "not-applied"
      ? `a revision ${name} never ran comes through its source's gate: \`${printedCommand("promote", name, "--revision", short)}\``
      : `to go there on purpose: \`${printedCommand("rollback", name, "--to", short, "--forward")}\``;
  throw new PromotionError(`${name} cannot roll back to ${short}: ${why}`, { hint }, ErrorCode.PROMOTION_NOT_EARLIER);
}

/** The revision a rollback goes to (undefined: the one asked for is in force already). */
export function rollbackChoice(name: string, lineage: Lineage, view: SourceView, asked: string | undefined, ask: RollbackAsk): RollbackChoice | undefined {
  if (asked === undefined) return stepsBack(name, lineage, view, ask.steps ?? 1);
  const retry = (r: string): string => printedCommand("rollback", name, "--to", r, ...(ask.forward === true ? ["--forward"] : []));
  const revision = resolveRevision(asked, [...lineage.applied, ...knownRevisions(view)], retry);
  const choice = toRevision(name, lineage, revision, ask.forward === true);
  return choice === "in-force" ? undefined : choice;
}

/** A promotion's revision: the one asked for, or the newest candidate — with what the operator should know of it. */
export function promotionChoice(name: string, lineage: Lineage, view: SourceView, asked: string | undefined): { revision: string; notes: string[] } {
  if (asked !== undefined)
    return { revision: resolveRevision(asked, knownRevisions(view), (r) => printedCommand("promote", name, "--revision", r)), notes: [] };
  const revision = newestCandidate(view)?.revision;
  if (revision === undefined) throw new PromotionError(`${view.name} has verified no revision yet: nothing to promote to ${name}`);
  const short = shortRevision(revision);
  if (lineage.abandoned.includes(revision))
    throw new PromotionError(`${name} was rolled back from ${short}, ${view.name}'s newest verified revision: it is not promoted again without being named`, {
      hint: `to take it again on purpose: \`${printedCommand("promote", name, "--revision", short)}\``,
    });
  const streak = streakOf(view.runs);
  const gate = streak === undefined || streak.revision === revision ? undefined : gateRefusal(streak.revision, view, Date.now());
  const notes = gate === undefined ? [] : [`a newer revision is on its way: ${gate}; this promotes ${short}, ${view.name}'s newest verified revision`];
  return { revision, notes };
}
