/**
 * The rollback targets of an environment (docs/user/promotion.md), read from its state: its
 * promotion rows folded into the lineage it stands on (promote/rollback.ts), and the revisions it
 * verified itself — a rollback goes only where the environment applied and verified. The daemon
 * chooses with it, the status page offers a rollback with it, `gatesync history` marks it.
 */
import { lineageOf, rollbackTargets } from "./rollback.js";
import type { AppliedEntry, Lineage, RollbackTarget } from "./rollback.js";
import type { HistoryEntry, HistoryStore } from "../record/history/history.js";
import { readPromotions, readVerifications } from "../record/history/promotion-history.js";
import type { PromotionRecord, VerificationRecord } from "../record/history/promotion-history.js";
import { standingOf } from "./verification.js";
import { verificationFactOf } from "./verifier.js";

/** Promotion rows the lineage is folded from, at most (the history's bound keeps fewer unless raised). */
export const lineageRows = 2_000;
/** Verification rows read: how far back an environment's own verifications are looked for. */
export const verificationRows = 200;

export const appliedEntryOf = (e: HistoryEntry<PromotionRecord>): AppliedEntry => ({
  seq: e.seq,
  revision: e.record.revision,
  rollback: e.record.rollback,
  ...(typeof e.record.restores === "number" ? { restores: e.record.restores } : {}),
  ...(e.record.forward === true ? { forward: true } : {}),
});

/** An environment's promotion rows, read once: the newest (the one in force) and the lineage they fold into. */
async function promotionsIn(state: HistoryStore): Promise<{ newest?: PromotionRecord; lineage: Lineage }> {
  const rows = await readPromotions(state, lineageRows);
  return { ...(rows[0] === undefined ? {} : { newest: rows[0].record }), lineage: lineageOf(rows.map(appliedEntryOf)) };
}

/** The lineage of an environment's promotion rows. */
export async function lineageIn(state: HistoryStore): Promise<Lineage> {
  return (await promotionsIn(state)).lineage;
}

/**
 * The lineage and its rollback targets (`--steps N` is the N-th), over the revisions the
 * environment verified, and its newest promotion row — from rows read once (newest first, as
 * read: up to `lineageRows` promotions and `verificationRows` verifications).
 */
export function rollbackTargetsOf(
  promotions: ReadonlyArray<HistoryEntry<PromotionRecord>>,
  verifications: ReadonlyArray<HistoryEntry<VerificationRecord>>,
): { newest?: PromotionRecord; lineage: Lineage; targets: RollbackTarget[] } {
  const lineage = lineageOf(promotions.map(appliedEntryOf));
  // a verification a later failing run withdrew is no target (promote/verification.ts: standingOf)
  const own = new Set(standingOf(verifications.map(verificationFactOf)).map((v) => v.revision));
  return { ...(promotions[0] === undefined ? {} : { newest: promotions[0].record }), lineage, targets: rollbackTargets(lineage, (r) => own.has(r)) };
}

/** rollbackTargetsOf, its rows read from `state`. */
export async function rollbackTargetsIn(state: HistoryStore): Promise<{ newest?: PromotionRecord; lineage: Lineage; targets: RollbackTarget[] }> {
  return rollbackTargetsOf(await readPromotions(state, lineageRows), await readVerifications(state, verificationRows));
}

export type { RollbackTarget };
