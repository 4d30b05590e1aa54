/**
 * What the status page says of an environment promoted from another (docs/user/promotion.md):
 * the revision in force (its newest promotion: from where, by whom, a rollback or not), the
 * source's newest candidate, the revision on its way there and the gate it waits at, and the
 * commands to run. One object per content, so the page cache draws the page again only when it
 * changed.
 */
import { promotedFromOf } from "../config/promotion-section.js";
import { gateRefusal, newestCandidate, shortRevision } from "../promote/gates.js";
import { streakOf } from "../promote/verification.js";
import { describeActor, readPromotions } from "../record/promotion-history.js";
import { sourceViewOf } from "./promotion.js";
import type { PromotionParts } from "./promotion.js";

export interface PromotionPanel {
  readonly from: string;
  readonly mode: "auto" | "manual";
  readonly inForce?: { readonly revision: string; readonly by: string; readonly rollback: boolean; readonly at: string };
  readonly candidate?: { readonly revision: string; readonly at: string };
  /** The source's newest revision not verified yet, and the gate it waits at. */
  readonly pending?: { readonly revision: string; readonly gate: string };
  readonly commands: readonly string[];
  /** The freeze or closed sync window it is held by (hold.ts): it applies and promotes nothing. */
  readonly held?: { readonly kind: "freeze" | "window"; readonly message: string };
}

/** The panel of environment `name`, or undefined when it follows the branch. */
export function promotionPanels(parts: PromotionParts, name: string): () => Promise<PromotionPanel | undefined> {
  let last: { text: string; panel: PromotionPanel } | undefined;
  return async () => {
    const unit = parts.unit(name);
    const from = promotedFromOf(unit?.config.track);
    const source = from === undefined ? undefined : parts.unit(from);
    if (unit === undefined || from === undefined || source === undefined) return undefined;
    const view = await sourceViewOf(source);
    const promotion = (await readPromotions(unit.state, 1))[0]?.record;
    const candidate = newestCandidate(view);
    const streak = streakOf(view.runs);
    const gate = streak === undefined ? undefined : gateRefusal(streak.revision, view, Date.now());
    const hold = await parts.hold?.(name);
    const panel: PromotionPanel = {
      ...(hold === undefined ? {} : { held: { kind: hold.kind, message: hold.message } }),
      from,
      mode: unit.reconciler.configInForce.config.promotion?.mode ?? "manual",
      ...(promotion === undefined
        ? {}
        : { inForce: { revision: promotion.revision, by: describeActor(promotion.actor), rollback: promotion.rollback, at: promotion.finishedAt } }),
      ...(candidate === undefined ? {} : { candidate: { revision: candidate.revision, at: new Date(candidate.at).toISOString() } }),
      ...(streak === undefined || gate === undefined ? {} : { pending: { revision: streak.revision, gate } }),
      commands: [
        ...(candidate === undefined || candidate.revision === promotion?.revision
          ? []
          : [`gatesync promote ${name} --revision ${shortRevision(candidate.revision)}`]),
        ...(promotion === undefined ? [] : [`gatesync rollback ${name} --steps 1`]),
        ...(hold?.kind === "freeze" ? [`gatesync unfreeze ${name}`] : []),
      ],
    };
    const text = JSON.stringify(panel);
    if (last?.text !== text) last = { text, panel };
    return last.panel;
  };
}
