/**
 * Promotion and rollback (docs/user/promotion.md), the daemon's one path for both: a revision is
 * checked against the rules (promote/gates.ts) over the source environment's rows, planned
 * against the target's state (a dry run stops there), then written as a promotion row in the
 * TARGET environment's state — a record of the shared state, so whichever replica leads the
 * target runs it — and the target's loop is asked to run; its notifier says "promoted".
 */
import type { PromotionActor, PromotionRecord } from "../record/promotion-history.js";
import { readPromotions, readVerifications, describeActor } from "../record/promotion-history.js";
import { PromotionError } from "../errors.js";
import { promotedFromOf } from "../config/promotion-section.js";
import { autoCandidate, gateRefusal, newestCandidate, shortRevision } from "../promote/gates.js";
import type { SourceView } from "../promote/gates.js";
import { runPlan } from "../plan/run-plan.js";
import { renderText } from "../plan/render.js";
import type { Plan } from "../plan/plan.js";
import type { GatesyncConfig } from "../config/config.js";
import type { Notifier } from "../notify/notifier.js";
import type { StateBackend } from "../record/state.js";
import type { Reconciler } from "./reconciler.js";
import type { RunHistory } from "./ui/run-history.js";
import { withTeamSettings } from "./repository-settings.js";
import type { TeamSettingsReader } from "./repository-settings.js";
import type { SharedSource } from "./shared-source.js";
import { runFactOf } from "./verifier.js";
import type { Hold } from "./hold.js";

export interface PromotionAsk {
  /** A commit id or its prefix; absent: the newest candidate (a rollback: `steps` back). */
  readonly revision?: string;
  readonly dryRun: boolean;
  readonly actor: PromotionActor;
  /** A rollback: to an earlier revision this environment applied and verified. */
  readonly rollback?: { readonly steps?: number };
  /** Through a freeze or a closed sync window (`--override-freeze`): recorded on the promotion's row. */
  readonly overrideFreeze?: boolean;
}

export interface PromotionAnswer {
  readonly environment: string;
  readonly revision: string;
  readonly from: string;
  readonly rollback: boolean;
  readonly dryRun: boolean;
  /** The plan the promotion applies against the target's state, as `gatesync plan` prints it. */
  readonly plan: string;
  readonly changes: number;
  /** What a rollback cannot undo through the interfaces (said before it starts). */
  readonly cannotUndo: readonly string[];
  /** The freeze or closed window the target is held by (hold.ts): a promotion goes through it only with `overrideFreeze`. */
  readonly held?: string;
}

/** What promotion reads and writes of an environment (environment-unit.ts makes it). */
export interface PromotionUnit {
  readonly name: string;
  readonly config: GatesyncConfig;
  readonly state: StateBackend;
  readonly history: Pick<RunHistory, "fresh" | "entries">;
  readonly reconciler: Pick<Reconciler, "configInForce" | "trigger">;
  readonly notifier: Notifier | undefined;
}

export interface PromotionParts {
  readonly unit: (name: string) => PromotionUnit | undefined;
  /** The source an environment reads (its `track:`): where a revision it is promoted to is checked out. */
  readonly sourceOf: (name: string) => SharedSource;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly validator: Parameters<typeof runPlan>[0]["validator"];
  /** The team settings of a commit (its values, patches, rules), as the environment's runs put them over the operator's. */
  readonly teamSettings: TeamSettingsReader;
  /** The freeze or closed sync window an environment is held by now (hold.ts), if any. */
  readonly hold?: (name: string) => Promise<Hold | undefined>;
}

/** What the rules read of an environment: its verifications and its runs, newest first. */
export async function sourceViewOf(unit: PromotionUnit): Promise<SourceView> {
  // the runs as the shared state holds them now: a standby's copy may be 2 s old, and a gate read
  // from it would answer otherwise than the source's leader (a fleet's replicas refuse alike)
  await unit.history.fresh(0);
  const verified = (await readVerifications(unit.state, 50)).map((v) => ({ revision: v.record.revision, at: Date.parse(v.record.finishedAt) }));
  const soakMs = unit.reconciler.configInForce.config.promotion?.soakMs ?? 0;
  return { name: unit.name, soakMs, verified, runs: unit.history.entries().map(runFactOf) };
}

/** A commit id or prefix as one of the revisions the rows name (a full id stays as given). */
function resolveRevision(asked: string, view: SourceView): string {
  if (!/^[0-9a-f]{4,40}$/.test(asked))
    throw new PromotionError(`${JSON.stringify(asked.slice(0, 80))} is not a commit id`, { hint: "give a commit id (at least 4 hex digits)" });
  const known = [...view.verified.map((v) => v.revision), ...view.runs.flatMap((r) => r.revision ?? [])];
  return known.find((r) => r.startsWith(asked)) ?? asked;
}

/** The unit to promote to, and the environment its candidates come from (itself for a rollback). */
function targetOf(parts: PromotionParts, name: string, rollback: boolean): { unit: PromotionUnit; from: PromotionUnit } {
  const unit = parts.unit(name);
  if (unit === undefined) throw new PromotionError(`there is no environment ${name}`);
  const fromName = promotedFromOf(unit.config.track);
  if (fromName === undefined)
    throw new PromotionError(`${name} is not promoted from another environment`, { hint: `set environments.${name}.track: { promotedFrom: ENV }` });
  const from = rollback ? unit : parts.unit(fromName);
  if (from === undefined) throw new PromotionError(`there is no environment ${fromName}`);
  return { unit, from };
}

/** The revision a rollback goes to: the given one, or `steps` verified revisions back from the one in force. */
async function rollbackRevision(unit: PromotionUnit, view: SourceView, ask: PromotionAsk): Promise<string> {
  if (ask.revision !== undefined) return resolveRevision(ask.revision, view);
  const inForce = (await readPromotions(unit.state, 1))[0]?.record.revision;
  const earlier = [...new Set(view.verified.map((v) => v.revision))].filter((r) => r !== inForce);
  const steps = ask.rollback?.steps ?? 1;
  const revision = earlier[steps - 1];
  if (revision === undefined)
    throw new PromotionError(`${unit.name} has ${earlier.length} earlier verified revision${earlier.length === 1 ? "" : "s"}: cannot go ${steps} back`);
  return revision;
}

/** Checks, plans and (unless a dry run) writes a promotion or rollback. */
export async function promote(parts: PromotionParts, name: string, ask: PromotionAsk): Promise<PromotionAnswer> {
  const rollback = ask.rollback !== undefined;
  const { unit, from } = targetOf(parts, name, rollback);
  const view = await sourceViewOf(from);
  const revision = rollback
    ? await rollbackRevision(unit, view, ask)
    : ask.revision === undefined
      ? newestCandidate(view)?.revision
      : resolveRevision(ask.revision, view);
  if (revision === undefined) throw new PromotionError(`${from.name} has verified no revision yet: nothing to promote to ${name}`);
  const refusal = gateRefusal(revision, view, Date.now());
  if (refusal !== undefined)
    throw new PromotionError(`${name} cannot take ${shortRevision(revision)}: ${refusal}`, { hint: `see gatesync history --env ${from.name}` });
  const hold = await parts.hold?.(name);
  if (hold !== undefined && !ask.dryRun && ask.overrideFreeze !== true) throw heldRefusal(name, hold, rollback);
  const plan = await planOf(parts, unit, revision);
  const answer: PromotionAnswer = {
    ...(hold === undefined ? {} : { held: hold.message }),
    environment: name,
    revision,
    from: from.name,
    rollback,
    dryRun: ask.dryRun,
    plan: renderText(plan, false),
    changes: plan.changes.filter((c) => c.action !== "no-op").length,
    cannotUndo: rollback ? cannotUndo(plan, revision) : [],
  };
  if (!ask.dryRun) await record(unit, answer, ask.actor);
  return answer;
}

/** A promotion or rollback refused while the target is held: how to go through (audited), or to lift the hold. */
function heldRefusal(name: string, hold: Hold, rollback: boolean): PromotionError {
  const lift = hold.kind === "freeze" ? `gatesync unfreeze ${name}` : `wait for its window`;
  return new PromotionError(`${hold.message}: it promotes and rolls back nothing while it lasts`, {
    hint: `${lift}, or go through it (recorded in its history): gatesync ${rollback ? "rollback" : "promote"} ${name} --override-freeze`,
  });
}

/** The plan of `revision`'s files against the target's state, with its config in force. */
async function planOf(parts: PromotionParts, unit: PromotionUnit, revision: string): Promise<Plan> {
  const source = parts.sourceOf(unit.name);
  await source.fetch();
  const snapshot = await source.at(revision);
  const release = snapshot.hold?.();
  try {
    const operator = unit.reconciler.configInForce.config;
    const run = await runPlan({
      config: withTeamSettings(operator, await parts.teamSettings.read(operator, snapshot)),
      root: snapshot.root,
      boundary: snapshot.boundary,
      validator: parts.validator,
      state: unit.state,
      env: parts.env,
      commit: revision,
      traced: false,
    });
    return run.plan;
  } finally {
    release?.();
  }
}

/** What going back to `revision` leaves as it is: objects created since (an orphan, never deleted), quotas reset. */
function cannotUndo(plan: Plan, revision: string): string[] {
  return plan.changes.flatMap((c) => {
    if (c.action === "orphan")
      return [
        `${c.id} was created after ${shortRevision(revision)}: the rollback does not delete it (${c.deactivate === true ? "it is deactivated" : "it stays, reported as an orphan"})`,
      ];
    if (c.quotaReset === true) return [`${c.id}: its quota is reset; the usage counted so far does not come back`];
    return [];
  });
}

async function record(unit: PromotionUnit, answer: PromotionAnswer, actor: PromotionActor, trigger = true): Promise<void> {
  const now = new Date().toISOString();
  const row: PromotionRecord = {
    kind: "promotion",
    revision: answer.revision,
    commit: answer.revision,
    from: answer.from,
    actor,
    rollback: answer.rollback,
    ...(answer.held === undefined ? {} : { overrideFreeze: answer.held }),
    startedAt: now,
    finishedAt: now,
  };
  await unit.state.appendHistory({ record: row }, unit.reconciler.configInForce.config.history);
  const done = answer.rollback ? `rolled back to ${shortRevision(answer.revision)}` : `promoted ${shortRevision(answer.revision)} from ${answer.from}`;
  const what = answer.held === undefined ? done : `${done} through the hold (${answer.held})`;
  unit.notifier?.promoted({ revision: answer.revision, summary: `${unit.name}: ${what} (${describeActor(actor)})` });
  if (trigger) unit.reconciler.trigger(answer.rollback ? "rollback" : "promotion");
}

/**
 * `promotion: auto`: the source's newest candidate, when it is newer than the promotion in force
 * and of another revision, written as a promotion by the daemon itself (the target's run that
 * asked applies it next). Asked at every decision (each fetch of the target, a wake-up scheduled
 * before a reload included) and judged under the `promotion:` in force then — never the one the
 * daemon started with: a reload to `manual` stops it at the next decision, one to `auto` starts it.
 */
export async function autoPromote(parts: PromotionParts, name: string): Promise<void> {
  const { unit, from } = targetOf(parts, name, false);
  // a held target (frozen, or outside its window) promotes nothing by itself: the candidate waits, promoted once the hold lifts
  if (unit.reconciler.configInForce.config.promotion?.mode !== "auto" || (await parts.hold?.(name)) !== undefined) return;
  const current = (await readPromotions(unit.state, 1))[0]?.record;
  const next = autoCandidate(await sourceViewOf(from), current === undefined ? undefined : { revision: current.revision, at: Date.parse(current.finishedAt) });
  if (next === undefined) return;
  const answer = { environment: name, revision: next.revision, from: from.name, rollback: false, dryRun: false, plan: "", changes: 0, cannotUndo: [] };
  await record(unit, answer, { by: "auto" }, false);
}
