/**
 * Promotion and rollback (docs/user/promotion.md), the daemon's one path for both: a revision is
 * checked against the rules (promote/gates.ts) over the source environment's rows, planned
 * against the target's state (a dry run stops there), then written as a promotion row in the
 * TARGET environment's state — a record of the shared state, so whichever replica leads the
 * target runs it — and the target's loop is asked to run; its notifier says "promoted".
 */
import type { PromotionActor, PromotionRecord } from "../record/history/promotion-history.js";
import { readVerifications, describeActor } from "../record/history/promotion-history.js";
import { PromotionError } from "../errors.js";
import type { Logger } from "../logger.js";
import { promotedFromOf } from "../config/promotion-section.js";
import { gateRefusal, selectionRefusal, shortRevision } from "./gates.js";
import type { SourceView } from "./gates.js";
import { runPlan } from "../run/run-plan.js";
import { renderText } from "../plan/render/render.js";
import type { PlanRun } from "../run/run-plan.js";
import type { Plan } from "../plan/plan.js";
import type { GatesyncConfig } from "../config/config.js";
import type { Notifier } from "../notify/notifier.js";
import type { StateBackend } from "../record/state.js";
import type { SourceSnapshot } from "../source/source.js";
import type { CommitSource } from "./promoted-source.js";
import { runFactOf, verificationFactOf } from "./verifier.js";
import type { RunRow } from "./verifier.js";
import { standingOf, withdrawalsOf } from "./verification.js";
import { promotionChoice, rollbackChoice } from "./rollback-choice.js";
import type { RollbackAsk, RollbackChoice } from "./rollback-choice.js";
import { lineageIn, verificationRows } from "./rollback-targets.js";
import { cannotUndo } from "./rollback-limits.js";
import { commandFor, printedCommand } from "../printed-commands.js";

export interface PromotionAsk {
  /** A commit id or its prefix; absent: the newest candidate (a rollback: `steps` back). */
  readonly revision?: string;
  readonly dryRun: boolean;
  readonly actor: PromotionActor;
  /** A rollback: to an earlier revision this environment applied and verified (`forward`: or to one not before the one in force). */
  readonly rollback?: RollbackAsk;
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
  /** What the operator should know of the choice (a newer revision soaking in the source). */
  readonly notes: readonly string[];
  /** The revision asked for is in force already: nothing recorded. */
  readonly alreadyInForce?: true;
  /** The freeze or closed window the target is held by (hold.ts): a promotion goes through it only with `overrideFreeze`. */
  readonly held?: string;
}

/** What promotion reads and writes of an environment (environment-unit.ts makes it). */
export interface PromotionUnit {
  readonly name: string;
  readonly config: GatesyncConfig;
  readonly state: StateBackend;
  /** Its runs, newest first (the daemon's run history), read fresh from the shared state. */
  readonly history: { reread(): Promise<void>; entries(): readonly RunRow[] };
  /** Its loop: the config in force (a reload replaces it), and a run asked for. */
  readonly reconciler: { readonly configInForce: { readonly config: GatesyncConfig }; trigger(reason: string): void };
  readonly notifier: Notifier | undefined;
}

export interface PromotionParts {
  readonly unit: (name: string) => PromotionUnit | undefined;
  /** The source an environment reads (its `track:`): where a revision it is promoted to is checked out. */
  readonly sourceOf: (name: string) => CommitSource;
  readonly env: Readonly<Record<string, string | undefined>>;
  readonly validator: Parameters<typeof runPlan>[0]["validator"];
  /** The team settings of a commit (its values, patches, rules), as the environment's runs put them over the operator's. */
  readonly teamSettings: { read(operator: GatesyncConfig, snapshot: SourceSnapshot): Promise<{ readonly config: GatesyncConfig }> };
  /** Where `promotion: auto` says why it did not promote a candidate. */
  readonly logger?: Logger;
  /**
   * The selection gate `promotion: auto` asks of a candidate (default: the target's plan against
   * what the source applied and checked). A model of the decisions alone, without sources to plan
   * from, gives one of its own; the gate itself is proven by the daemon's tests.
   */
  readonly autoGate?: (parts: PromotionParts, unit: PromotionUnit, from: PromotionUnit, revision: string) => Promise<string | undefined>;
  /** The freeze or closed sync window an environment is held by now (hold.ts), if any. */
  readonly hold?: (name: string) => Promise<PromotionHold | undefined>;
  /** Told how each promotion or rollback asked for ended (the daemon's gatesync_promotions_total). */
  readonly observe?: (environment: string, outcome: PromotionOutcome) => void;
}

/** How a promotion or rollback asked for ended, as the metrics count it. */
export interface PromotionOutcome {
  readonly kind: "promotion" | "rollback";
  /** A person's (through the promote route's token) or `promotion: auto`'s. */
  readonly actor: "token" | "auto";
  readonly result: "recorded" | "dry-run" | "in-force" | "refused";
}

/** A freeze or closed sync window, as promotion reads it (the daemon's hold.ts makes them: its `Hold`). */
export interface PromotionHold {
  readonly kind: "freeze" | "window";
  /** As every place says it: "production frozen until 18:00 UTC: incident 4521". */
  readonly message: string;
}

/** What the rules read of an environment: its verifications and its runs, newest first. */
export async function sourceViewOf(unit: PromotionUnit): Promise<SourceView> {
  // the runs as the shared state holds them now: a standby's copy may be 2 s old, and a gate read
  // from it would answer otherwise than the source's leader (a fleet's replicas refuse alike)
  await unit.history.reread();
  const rows = (await readVerifications(unit.state, verificationRows)).map(verificationFactOf);
  const verified = standingOf(rows).map((v) => ({ revision: v.revision, at: v.at }));
  const withdrawn = withdrawalsOf(rows).map((v) => ({ revision: v.revision, at: v.at, reason: v.withdrawn ?? "" }));
  const soakMs = unit.reconciler.configInForce.config.promotion?.soakMs ?? 0;
  return { name: unit.name, soakMs, verified, withdrawn, runs: unit.history.entries().map(runFactOf) };
}

/** The unit to promote to, and the environment its candidates come from (itself for a rollback). */
export function targetOf(parts: PromotionParts, name: string, rollback: boolean): { unit: PromotionUnit; from: PromotionUnit } {
  const unit = parts.unit(name);
  if (unit === undefined) throw new PromotionError(`there is no environment ${name}`);
  const fromName = promotedFromOf(unit.config.track);
  if (fromName === undefined)
    throw new PromotionError(`${name} is not promoted from another environment`, { hint: `set environments.${name}.track: { promotedFrom: ENV }` });
  const from = rollback ? unit : parts.unit(fromName);
  if (from === undefined) throw new PromotionError(`there is no environment ${fromName}`);
  return { unit, from };
}

/**
 * The revision asked for, where a rollback puts it in the lineage, and the notes: nothing is
 * planned yet. No choice: the one asked for is the revision in force (the lineage's top), `inForce`.
 */
async function chosen(
  name: string,
  unit: PromotionUnit,
  view: SourceView,
  ask: PromotionAsk,
): Promise<{ choice?: RollbackChoice; notes: string[]; inForce?: string }> {
  const lineage = await lineageIn(unit.state);
  const inForce = lineage.entries[lineage.entries.length - 1]?.revision;
  const top = inForce === undefined ? {} : { inForce };
  if (ask.rollback !== undefined) {
    const choice = rollbackChoice(name, lineage, view, ask.revision, ask.rollback);
    return { ...(choice === undefined ? {} : { choice }), notes: [], ...top };
  }
  const { revision, notes } = promotionChoice(name, lineage, view, ask.revision);
  return { ...(revision === inForce ? {} : { choice: { revision } }), notes, ...top };
}

/** The answer to a promotion or rollback of the revision in force: nothing to record. */
function alreadyInForce(unit: PromotionUnit, revision: string, from: string, rollback: boolean, dryRun: boolean): PromotionAnswer {
  const plan = `${shortRevision(revision)} is already in force in ${unit.name}: nothing to promote\n`;
  return { environment: unit.name, revision, from, rollback, dryRun, plan, changes: 0, cannotUndo: [], notes: [], alreadyInForce: true };
}

/** Checks, plans and (unless a dry run) writes a promotion or rollback; `parts.observe` is told how it ended. */
export async function promote(parts: PromotionParts, name: string, ask: PromotionAsk): Promise<PromotionAnswer> {
  const kind = ask.rollback === undefined ? "promotion" : "rollback";
  const actor = ask.actor.by === "auto" ? "auto" : "token";
  try {
    const answer = await promoteOnce(parts, name, ask);
    const result = answer.alreadyInForce === true ? "in-force" : ask.dryRun ? "dry-run" : "recorded";
    parts.observe?.(name, { kind, actor, result });
    return answer;
  } catch (err) {
    // refused by a gate, a hold or the revision asked for (no such environment: nothing to count it on)
    if (err instanceof PromotionError && parts.unit(name) !== undefined) parts.observe?.(name, { kind, actor, result: "refused" });
    throw err;
  }
}

async function promoteOnce(parts: PromotionParts, name: string, ask: PromotionAsk): Promise<PromotionAnswer> {
  const rollback = ask.rollback !== undefined;
  const { unit, from } = targetOf(parts, name, rollback);
  const view = await sourceViewOf(from);
  const { choice, notes, inForce } = await chosen(name, unit, view, ask);
  if (choice === undefined) return alreadyInForce(unit, inForce!, from.name, rollback, ask.dryRun);
  const revision = choice.revision;
  const refusal = gateRefusal(revision, view, Date.now());
  if (refusal !== undefined)
    throw new PromotionError(`${name} cannot take ${shortRevision(revision)}: ${refusal}`, {
      hint: `see ${commandFor(printedCommand("history"), { env: from.name })}`,
    });
  const hold = await parts.hold?.(name);
  if (hold !== undefined && !ask.dryRun && ask.overrideFreeze !== true) throw heldRefusal(name, hold, rollback, choice);
  const { plan, state } = await planOf(parts, unit, revision);
  // what this environment would get must be what the source applied and checked (not for a rollback: its own past)
  const escaped = rollback ? undefined : await escapedSource(parts, from, plan, revision);
  if (escaped !== undefined)
    throw new PromotionError(`${name} cannot take ${shortRevision(revision)}: ${escaped}`, {
      hint: `see ${commandFor(printedCommand("history"), { env: from.name })}, and the selector ${from.name}'s gatesync.yaml sets at ${shortRevision(revision)}`,
    });
  const answer: PromotionAnswer = {
    ...(hold === undefined ? {} : { held: hold.message }),
    environment: name,
    revision,
    from: from.name,
    rollback,
    dryRun: ask.dryRun,
    plan: renderText(plan, false),
    changes: plan.changes.filter((c) => c.action !== "no-op").length,
    cannotUndo: rollback ? cannotUndo(plan, state, revision) : [],
    notes,
  };
  if (!ask.dryRun) await record(unit, answer, ask.actor, choice);
  return answer;
}

/** A promotion or rollback refused while the target is held: how to go through (audited), or to lift the hold. */
function heldRefusal(name: string, hold: PromotionHold, rollback: boolean, choice: RollbackChoice): PromotionError {
  const lift = hold.kind === "freeze" ? `\`${printedCommand("unfreeze", name)}\`` : `wait for its window`;
  // the same revision as asked, by its id: the command goes exactly where this one was refused
  const through = rollback
    ? printedCommand("rollback", name, "--to", choice.revision, ...(choice.forward === true ? ["--forward"] : []), "--override-freeze")
    : printedCommand("promote", name, "--revision", choice.revision, "--override-freeze");
  return new PromotionError(`${hold.message}: it promotes and rolls back nothing while it lasts`, {
    hint: `${lift}, or go through it (recorded in its history): \`${through}\``,
  });
}

/** The plan of `revision`'s files against the target's state, with its config in force. */
async function planOf(parts: PromotionParts, unit: PromotionUnit, revision: string): Promise<Pick<PlanRun, "plan" | "state">> {
  const source = parts.sourceOf(unit.name);
  await source.fetch();
  const snapshot = await source.at(revision);
  const release = snapshot.hold?.();
  try {
    const operator = unit.reconciler.configInForce.config;
    const run = await runPlan({
      config: (await parts.teamSettings.read(operator, snapshot)).config,
      root: snapshot.root,
      boundary: snapshot.boundary,
      validator: parts.validator,
      state: unit.state,
      env: parts.env,
      commit: revision,
      traced: false,
    });
    return run;
  } finally {
    release?.();
  }
}

/**
 * Why the target's plan at `revision` changes something the source did not apply and check at
 * it (promote/gates.ts: selectionRefusal), from the source's own plan at that revision — its
 * selection as the commit's team settings made it — and its state.
 */
async function escapedSource(parts: PromotionParts, from: PromotionUnit, plan: Plan, revision: string): Promise<string | undefined> {
  const changed = plan.changes.filter((c) => c.action !== "no-op").map((c) => ({ id: c.id, orphan: c.action === "orphan" }));
  if (changed.length === 0) return undefined;
  const judged = new Set((await planOf(parts, from, revision)).plan.changes.map((c) => c.id));
  const state = await from.state.read();
  const applied = new Set<string>();
  const failing = new Map<string, string>();
  for (const [id, record] of state.resources) {
    if (record.status === "applied") applied.add(id);
    const health = record.health?.read();
    if (health !== undefined && !health.ok) failing.set(id, health.reason ?? "failing");
  }
  return selectionRefusal(revision, from.name, changed, { judged, applied, failing });
}

export async function record(unit: PromotionUnit, answer: PromotionAnswer, actor: PromotionActor, choice: RollbackChoice, trigger = true): Promise<void> {
  const now = new Date().toISOString();
  const row: PromotionRecord = {
    kind: "promotion",
    revision: answer.revision,
    commit: answer.revision,
    from: answer.from,
    actor,
    rollback: answer.rollback,
    ...(choice.restores === undefined ? {} : { restores: choice.restores }),
    ...(choice.forward === true ? { forward: true } : {}),
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

/** The selection gate of a candidate: the target's plan at `revision` against what the source applied and checked. */
export async function selectionGate(parts: PromotionParts, unit: PromotionUnit, from: PromotionUnit, revision: string): Promise<string | undefined> {
  return escapedSource(parts, from, (await planOf(parts, unit, revision)).plan, revision);
}
