/**
 * `promotion: auto` (docs/user/promotion.md), a step of the target's reconcile loop of its own:
 * before each fetch (daemon/loop/reconciler.ts), as kargo's stage reconciler calls
 * `autoPromoteFreight`, the source's newest candidate — when it is newer than the promotion in
 * force, of another revision and not one a rollback since left — is written as a promotion by the
 * daemon itself, through the same gates as a person's (promotion.ts); the fetch after it reads
 * the promotion in force (promoted-source.ts), and the run applies it.
 */
import { readPromotions } from "../record/history/promotion-history.js";
import type { StateVersion } from "../record/state.js";
import { autoCandidate } from "./gates.js";
import { record, selectionGate, sourceViewOf, targetOf } from "./promotion.js";
import type { PromotionAnswer, PromotionParts, PromotionUnit } from "./promotion.js";
import { lineageIn } from "./rollback-targets.js";

/**
 * Asked at every decision (each run of the target, a wake-up scheduled before a reload included)
 * and judged under the `promotion:` in force then — never the one the daemon started with: a
 * reload to `manual` stops it at the next decision, one to `auto` starts it.
 */
export async function autoPromote(parts: PromotionParts, name: string): Promise<void> {
  const { unit, from } = targetOf(parts, name, false);
  // a held target (frozen, or outside its window) promotes nothing by itself: the candidate waits, promoted once the hold lifts
  if (unit.reconciler.configInForce.config.promotion?.mode !== "auto" || (await parts.hold?.(name)) !== undefined) return;
  const current = (await readPromotions(unit.state, 1))[0]?.record;
  const next = autoCandidate(await sourceViewOf(from), current === undefined ? undefined : { revision: current.revision, at: Date.parse(current.finishedAt) });
  // a revision the environment was rolled back from is not taken back by itself, even verified again
  if (next === undefined || (await lineageIn(unit.state)).abandoned.includes(next.revision)) return;
  // the same gate as a person's promotion, judged again only when what it reads changed (each run asks)
  const key = await verdictKey(unit, from, next.revision);
  const judged = autoVerdicts.get(unit);
  const fresh = judged?.key !== key;
  const refusal = fresh ? await (parts.autoGate ?? selectionGate)(parts, unit, from, next.revision) : judged.refusal;
  autoVerdicts.set(unit, { key, refusal });
  if (refusal !== undefined) {
    // counted once per verdict: each run asks again, and the same refusal is not a new one
    if (fresh) parts.observe?.(name, { kind: "promotion", actor: "auto", result: "refused" });
    parts.logger?.warn({ environment: name, revision: next.revision, refusal }, "promotion: auto did not promote the candidate");
    return;
  }
  const answer: PromotionAnswer = {
    environment: name,
    revision: next.revision,
    from: from.name,
    rollback: false,
    dryRun: false,
    plan: "",
    changes: 0,
    cannotUndo: [],
    notes: [],
  };
  await record(unit, answer, { by: "auto" }, { revision: next.revision }, false);
  parts.observe?.(name, { kind: "promotion", actor: "auto", result: "recorded" });
}

const versionText = (v: StateVersion): string => `${v.lineage}:${v.serial}`;

/**
 * What the gate's verdict depends on: the candidate, the target's selector, and both states as
 * written (their serials) — the source's records say what it applied and whether its checks pass,
 * so a check that fails and later recovers there is judged again, not refused for good; the
 * target's say what its plan would change.
 */
async function verdictKey(unit: PromotionUnit, from: PromotionUnit, revision: string): Promise<string> {
  const [source, target] = [await from.state.readVersion(), await unit.state.readVersion()];
  const selector = unit.reconciler.configInForce.config.selector ?? null;
  return JSON.stringify([revision, selector, versionText(source), versionText(target)]);
}

/** The gate's verdict on `promotion: auto`'s newest candidate (what it read: `verdictKey`), per target (no refusal: it passes). */
const autoVerdicts = new WeakMap<PromotionUnit, { readonly key: string; readonly refusal: string | undefined }>();
