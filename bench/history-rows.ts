/**
 * The rows bench/history.ts fills each environment's history with before its daemon starts, and
 * what one row costs on its own: realistic rows (a run of 1,000 applied changes, its lists cut
 * by boundReport as the daemon cuts them, with verifications and promotions among the runs),
 * appended through the state backend's own appendHistory up to the bound.
 */
import type { HistoryBound } from "../src/config/history-section.js";
import type { RunRecord } from "../src/daemon/history/run-record.js";
import { boundReport } from "../src/daemon/history/run-record.js";
import type { HistoryRecord } from "../src/record/history/history.js";
import type { PromotionRecord, VerificationRecord } from "../src/record/history/promotion-history.js";
import type { StateBackend } from "../src/record/state.js";
import { applySummary } from "../test/helpers/apply-summary.js";
import { repeat, time } from "./common.js";

const changesPerRun = 1_000;
const author = "Ada Lovelace";
const subject = "raise the rate of every key of the storefront team to 20 requests per second";
const commitOf = (n: number): string => n.toString(16).padStart(40, "0");

/** A row as a run of 1,000 applied changes leaves it (its lists cut to 100 by boundReport). */
export function bigRun(n: number): RunRecord {
  const ids = Array.from({ length: changesPerRun }, (_, i) => `OrgKey/key-${String(i).padStart(4, "0")}`);
  const calls = { gateway: 1000, portal: 0, dashboard: 0, llm: 0, mail: 0, batchCalls: 20, batched: 1000, total: 1020, checks: 0, retries: 0, pauses: 0 };
  const summary = applySummary({ applied: ids, calls, durationMs: 9000 });
  const at = new Date().toISOString();
  const report = boundReport({
    reason: "schedule",
    startedAt: at,
    finishedAt: at,
    durationMs: 9000,
    result: "applied",
    revision: `r${n}`,
    commit: commitOf(n),
    summary,
  });
  return {
    kind: "run",
    trigger: "schedule",
    outcome: "applied",
    revision: `r${n}`,
    commit: commitOf(n),
    author,
    subject,
    counts: { applied: changesPerRun, failed: 0, inDoubt: 0, blocked: 0, skipped: 0, changes: changesPerRun, calls: 1020 },
    durationMs: 9000,
    startedAt: at,
    finishedAt: at,
    replica: "bench:1",
    synced: true,
    report,
    changes: ids.slice(0, 100).map((id) => ({ id, action: "update" as const })),
  };
}

function verification(n: number): VerificationRecord {
  const at = new Date().toISOString();
  return { kind: "verification", revision: `r${n}`, commit: commitOf(n), author, subject, soakMs: 600_000, startedAt: at, finishedAt: at };
}

function promotion(n: number): PromotionRecord {
  const at = new Date().toISOString();
  return {
    kind: "promotion",
    revision: `r${n}`,
    commit: commitOf(n),
    author,
    subject,
    from: "staging",
    actor: { by: "token", token: "promote" },
    rollback: false,
    startedAt: at,
    finishedAt: at,
  };
}

/** Row n of a full history: mostly runs; every 10th a verification, every 25th a promotion. */
export function historyRow(n: number): HistoryRecord {
  if (n % 25 === 24) return promotion(n);
  if (n % 10 === 9) return verification(n);
  return bigRun(n);
}

/** Appends `bound.keep` rows through the backend's appendHistory: the history at its bound. */
export async function fillHistory(state: StateBackend, bound: HistoryBound): Promise<void> {
  for (let n = 0; n < bound.keep; n++) await state.appendHistory({ record: historyRow(n) }, bound);
}

/** On a state at its bound: one new row, a quiet run folded into the newest, the read of the newest 50 runs. */
export async function rowCosts(state: StateBackend, bound: HistoryBound): Promise<Record<string, unknown>> {
  const quiet = { ...bigRun(0), outcome: "noop" as const, changes: [], counts: { ...bigRun(0).counts, applied: 0, changes: 0, calls: 0 } };
  return {
    appendMs: await repeat(20, () => time(() => state.appendHistory({ record: bigRun(1) }, bound))),
    foldMs: await repeat(20, () => time(() => state.appendHistory({ record: quiet, foldKey: "run:noop:r0" }, bound))),
    readNewest50Ms: await repeat(20, () => time(() => state.readHistory({ kind: "run", limit: 50 }))),
  };
}
