/** The action of `gatesync history` (history-command.ts declares it), loaded when it runs. */
import { openStateBackend } from "../../../record/open-backend.js";
import { runEntryOf } from "../../../daemon/history/run-record.js";
import type { HistoryEntry } from "../../../record/history/history.js";
import { describeActor, readPromotions, readVerifications } from "../../../record/history/promotion-history.js";
import type { PromotionRecord, VerificationRecord } from "../../../record/history/promotion-history.js";
import type { RunEntry } from "../../../daemon/history/run-record.js";
import { lineageRows, rollbackTargetsOf, verificationRows } from "../../../promotion/rollback-targets.js";
import type { RollbackTarget } from "../../../promotion/rollback-targets.js";
import type { CliIo } from "../../common/cli-io.js";
import { environmentConfig } from "../../common/environment-option.js";
import { stripControls } from "../../../text/bounded-text.js";

export interface HistoryOptions {
  readonly config: string;
  readonly env?: string;
  readonly format: "text" | "json";
  readonly limit: number;
}

/** One run as JSON: the row's record, its place, and its folded repeats. */
function runJson(e: RunEntry): Record<string, unknown> {
  const { report: _report, ...record } = e.record;
  return { seq: e.seq, ...record, repeats: e.repeats, firstAt: e.firstAt, lastAt: e.lastAt };
}

/**
 * One run in a line or two: when, what, which commit by whom, the counts, the replica. The
 * subject, author, error and replica came from a repository, a server or a peer, and the
 * state holds rows older versions wrote unstripped: stripped here, as printed.
 */
function runText(e: RunEntry): string {
  return runLines(e).map(oneLine).join("\n");
}

function runLines(e: RunEntry): string[] {
  const r = e.record;
  const c = r.counts;
  const commit = (r.commit ?? r.revision ?? "no revision").slice(0, 12);
  const repeats = e.repeats === 0 ? "" : ` (×${e.repeats + 1} until ${e.lastAt})`;
  const counts = `${c.applied} applied, ${c.failed} failed, ${c.inDoubt} in doubt, ${c.blocked} blocked, ${c.calls} calls`;
  const lines = [`#${e.seq} ${r.startedAt} ${r.outcome.padEnd(12)} ${r.trigger} · ${commit} · ${counts} · ${r.durationMs} ms · on ${r.replica}${repeats}`];
  if (r.subject !== undefined || r.author !== undefined) lines.push(`    ${r.subject ?? ""}${r.author === undefined ? "" : ` — ${r.author}`}`);
  if (r.report.error !== undefined) lines.push(`    error: ${r.report.error}`);
  for (const failure of r.checkFailures ?? []) lines.push(`    check failed: ${failure}`);
  return lines;
}

/** A printed line of outside text: stripped, and one line (a newline in a subject would start a line that reads as another run). */
const oneLine = (l: string): string => stripControls(l).replace(/[\n\t]/g, " ");

/** What a promotion row is to a rollback: the one in force, or the entry `--steps N` goes back to. */
function rollbackMark(e: HistoryEntry<PromotionRecord>, inForce: number | undefined, targets: readonly RollbackTarget[]): string {
  if (e.seq === inForce) return "  ← in force";
  const target = targets.find((t) => t.seq === e.seq);
  return target === undefined ? "" : `  ← rollback --steps ${target.steps}`;
}

/** Promotions (each marked: in force, or a rollback target) and verifications (docs/user/promotion.md), one line each. */
function promotionText(
  promotions: ReadonlyArray<HistoryEntry<PromotionRecord>>,
  verifications: ReadonlyArray<HistoryEntry<VerificationRecord>>,
  targets: readonly RollbackTarget[],
): string {
  const inForce = promotions[0]?.seq;
  const lines = [
    ...promotions.map(
      (e) =>
        `#${e.seq} ${e.record.finishedAt} ${e.record.rollback ? "rolled back to" : "promoted"} ${e.record.revision.slice(0, 12)} from ${e.record.from} (${describeActor(e.record.actor)})${rollbackMark(e, inForce, targets)}`,
    ),
    ...verifications.map((e) =>
      e.record.withdrawn === undefined
        ? `#${e.seq} ${e.record.finishedAt} verified ${e.record.revision.slice(0, 12)} after a soak of ${e.record.soakMs} ms`
        : `#${e.seq} ${e.record.finishedAt} withdrew the verification of ${e.record.revision.slice(0, 12)}: ${e.record.withdrawn.reason}`,
    ),
  ].map(oneLine);
  return lines.length === 0 ? "" : `Promotions and verifications:\n${lines.map((l) => `  ${l}\n`).join("")}`;
}

export async function historyAction(opts: HistoryOptions, io: CliIo): Promise<void> {
  const config = await environmentConfig(opts.config, opts.env, "history");
  const state = openStateBackend(config, io.env);
  try {
    const runs = (await state.readHistory({ kind: "run", limit: opts.limit })).flatMap((e) => runEntryOf(e) ?? []);
    // read once, as far back as the rollback targets look; shown as far as --limit says
    const [promotionsRead, verificationsRead] = [
      await readPromotions(state, Math.max(opts.limit, lineageRows)),
      await readVerifications(state, Math.max(opts.limit, verificationRows)),
    ];
    const { targets } = rollbackTargetsOf(promotionsRead.slice(0, lineageRows), verificationsRead.slice(0, verificationRows));
    const [promotions, verifications] = [promotionsRead.slice(0, opts.limit), verificationsRead.slice(0, opts.limit)];
    if (opts.format === "json") {
      const rows = { promotions: promotions.map((e) => ({ seq: e.seq, ...e.record })), verifications: verifications.map((e) => ({ seq: e.seq, ...e.record })) };
      io.stdout(`${JSON.stringify({ state: state.description, runs: runs.map(runJson), ...rows, rollbackTargets: targets }, null, 2)}\n`);
    } else if (runs.length === 0) io.stdout(`no run recorded in ${state.description} yet\n${promotionText(promotions, verifications, targets)}`);
    else io.stdout(`${runs.map(runText).join("\n")}\n${promotionText(promotions, verifications, targets)}`);
  } finally {
    await state.close();
  }
}
