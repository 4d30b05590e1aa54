/**
 * The history rows of promotion (docs/user/promotion.md): a *verification* — a revision this
 * environment applied with nothing failed, in doubt or blocked, its post-apply checks healthy,
 * then kept through its soak — is a row in the environment's own state; a *promotion* — the
 * revision an environment promoted from another runs from now on — is a row in the TARGET
 * environment's state. Both are records of the shared state, not messages: whichever replica
 * leads either environment reads the same rows.
 */
import type { HistoryEntry, HistoryRecord, HistoryStore } from "./history.js";

/** Who or what promoted: the daemon by itself (`promotion: auto`), a person with the promotion token, or a rollback (with it too). */
export type PromotionActor = { readonly by: "auto" } | { readonly by: "token"; readonly token: string } | { readonly by: "rollback"; readonly token: string };

export interface VerificationRecord extends HistoryRecord {
  readonly kind: "verification";
  readonly revision: string;
  readonly commit?: string;
  readonly author?: string;
  readonly subject?: string;
  /** The soak it was kept through (`startedAt`: its first healthy run; `finishedAt`: the run that ended the soak). */
  readonly soakMs: number;
  /**
   * A withdrawal: a later run of this revision failed here (an apply error, a post-apply check),
   * so its verification no longer stands; `reason` says why (bounded, scrubbed). A revision is
   * verified again only by a new verification row after it.
   */
  readonly withdrawn?: { readonly reason: string };
}

export interface PromotionRecord extends HistoryRecord {
  readonly kind: "promotion";
  readonly revision: string;
  readonly commit?: string;
  readonly author?: string;
  readonly subject?: string;
  /** The environment the revision was verified in (a rollback: this environment itself). */
  readonly from: string;
  readonly actor: PromotionActor;
  readonly rollback: boolean;
  /** A rollback: the promotion row (its seq) it went back to — counting back goes on from there (promote/rollback.ts). */
  readonly restores?: number;
  /** A rollback `--forward`: to a revision not before the one in force, which it puts on top as a promotion would. */
  readonly forward?: boolean;
  /** Promoted through a freeze or a closed sync window by the operator's explicit override (`--override-freeze`): the hold it went through. */
  readonly overrideFreeze?: string;
}

const text = (v: unknown): boolean => typeof v === "string" && v !== "";

/** A verification row as read, checked (storage may be damaged); undefined when it is not one. */
export function verificationEntryOf(entry: HistoryEntry): HistoryEntry<VerificationRecord> | undefined {
  const r = entry.record as Partial<Record<keyof VerificationRecord, unknown>>;
  if (r.kind !== "verification" || !text(r.revision) || typeof r.soakMs !== "number") return undefined;
  const withdrawn = r.withdrawn as { reason?: unknown } | undefined;
  if (withdrawn !== undefined && (typeof withdrawn !== "object" || withdrawn === null || typeof withdrawn.reason !== "string")) return undefined;
  return entry as HistoryEntry<VerificationRecord>;
}

/** A promotion row as read, checked; undefined when it is not one. */
export function promotionEntryOf(entry: HistoryEntry): HistoryEntry<PromotionRecord> | undefined {
  const r = entry.record as Partial<Record<keyof PromotionRecord, unknown>>;
  const actor = r.actor as { by?: unknown } | undefined;
  const actorOk = typeof actor === "object" && actor !== null && (actor.by === "auto" || actor.by === "token" || actor.by === "rollback");
  if (r.kind !== "promotion" || !text(r.revision) || !text(r.from) || !actorOk || typeof r.rollback !== "boolean") return undefined;
  return entry as HistoryEntry<PromotionRecord>;
}

/** The newest verifications of an environment, newest first. */
export async function readVerifications(store: HistoryStore, limit: number): Promise<Array<HistoryEntry<VerificationRecord>>> {
  return (await store.readHistory({ kind: "verification", limit })).flatMap((e) => verificationEntryOf(e) ?? []);
}

/** The newest promotions into an environment, newest first (the first is the revision in force). */
export async function readPromotions(store: HistoryStore, limit: number): Promise<Array<HistoryEntry<PromotionRecord>>> {
  return (await store.readHistory({ kind: "promotion", limit })).flatMap((e) => promotionEntryOf(e) ?? []);
}

/** Who promoted, as a person reads it. */
export function describeActor(actor: PromotionActor): string {
  if (actor.by === "auto") return "promotion: auto";
  return `${actor.by === "rollback" ? "rollback" : "promote"} with ${actor.token}`;
}
