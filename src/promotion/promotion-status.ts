/**
 * What the status page says of an environment promoted from another (docs/user/promotion.md):
 * the revision in force (its newest promotion: from where, by whom, a rollback or not), the
 * source's newest candidate, the revision on its way there and the gate it waits at, and the
 * commands to run (a rollback only when it has somewhere to go). One object per content, so the page cache draws the page again only when it
 * changed.
 */
import { printedCommand } from "../printed-commands.js";
import { promotedFromOf } from "../config/promotion-section.js";
import { gateRefusal, newestCandidate, shortRevision } from "./gates.js";
import { standingOf, streakOf, withdrawalsOf } from "./verification.js";
import { describeActor, readVerifications } from "../record/history/promotion-history.js";
import type { HistoryStore } from "../record/history/history.js";
import { sourceViewOf } from "./promotion.js";
import { rollbackTargetsIn } from "./rollback-targets.js";
import { verificationFactOf } from "./verifier.js";
import type { PromotionHold, PromotionParts } from "./promotion.js";

export interface PromotionPanel {
  readonly from: string;
  readonly mode: "auto" | "manual";
  readonly inForce?: { readonly revision: string; readonly by: string; readonly rollback: boolean; readonly at: string };
  readonly candidate?: { readonly revision: string; readonly at: string };
  /** The source's newest revision not verified yet, and the gate it waits at. */
  readonly pending?: { readonly revision: string; readonly gate: string };
  /** The source's newest withdrawn verification: a revision no longer a candidate, and why. */
  readonly withdrawn?: { readonly revision: string; readonly at: string; readonly reason: string };
  readonly commands: readonly string[];
  /** The freeze or closed sync window it is held by (hold.ts): it applies and promotes nothing. */
  readonly held?: { readonly kind: "freeze" | "window"; readonly message: string };
}

/** The panel of environment `name`, or undefined when it follows the branch. */
export function promotionPanels(parts: PromotionParts, name: string): (hold: PromotionHold | undefined) => Promise<PromotionPanel | undefined> {
  let last: { text: string; panel: PromotionPanel } | undefined;
  // the hold is the page's, read once for its banner and this panel
  return async (hold) => {
    const unit = parts.unit(name);
    const from = promotedFromOf(unit?.config.track);
    const source = from === undefined ? undefined : parts.unit(from);
    if (unit === undefined || from === undefined || source === undefined) return undefined;
    const view = await sourceViewOf(source);
    // a rollback is offered only where it can go: an earlier revision this environment applied and verified
    const { newest: promotion, targets, lineage } = await rollbackTargetsIn(unit.state);
    const candidate = newestCandidate(view);
    const streak = streakOf(view.runs);
    const gate = streak === undefined ? undefined : gateRefusal(streak.revision, view, Date.now());
    const withdrawn = view.withdrawn?.[0];
    const panel: PromotionPanel = {
      ...(hold === undefined ? {} : { held: { kind: hold.kind, message: hold.message } }),
      from,
      mode: unit.reconciler.configInForce.config.promotion?.mode ?? "manual",
      ...(promotion === undefined
        ? {}
        : { inForce: { revision: promotion.revision, by: describeActor(promotion.actor), rollback: promotion.rollback, at: promotion.finishedAt } }),
      ...(candidate === undefined ? {} : { candidate: { revision: candidate.revision, at: new Date(candidate.at).toISOString() } }),
      ...(streak === undefined || gate === undefined ? {} : { pending: { revision: streak.revision, gate } }),
      ...(withdrawn === undefined ? {} : { withdrawn: { revision: withdrawn.revision, at: new Date(withdrawn.at).toISOString(), reason: withdrawn.reason } }),
      commands: [
        // nor is the revision a rollback just left offered again: taking it back is a decision, not a suggestion
        ...(candidate === undefined || candidate.revision === promotion?.revision || lineage.abandoned.includes(candidate.revision)
          ? []
          : [printedCommand("promote", name, "--revision", shortRevision(candidate.revision))]),
        ...(targets.length === 0 ? [] : [printedCommand("rollback", name, "--steps", "1")]),
        ...(hold?.kind === "freeze" ? [printedCommand("unfreeze", name)] : []),
      ],
    };
    const text = JSON.stringify(panel);
    if (last?.text !== text) last = { text, panel };
    return last.panel;
  };
}

/** What `/status` says of an environment's verifications: those that stand and those withdrawn (newest first, at most 10 each). */
export async function verificationStatus(state: HistoryStore): Promise<Record<string, unknown> | undefined> {
  const rows = (await readVerifications(state, 50)).map(verificationFactOf);
  if (rows.length === 0) return undefined;
  const at = (ms: number): string => new Date(ms).toISOString();
  return {
    verified: standingOf(rows)
      .slice(0, 10)
      .map((v) => ({ revision: v.revision, at: at(v.at) })),
    withdrawn: withdrawalsOf(rows)
      .slice(0, 10)
      .map((v) => ({ revision: v.revision, at: at(v.at), reason: v.withdrawn })),
  };
}
