/**
 * What an environment's run view holds between reads: the newest rows as lines (no lists), the
 * newest whole; the lists come back from the state when a page asks (issue 46's memory row:
 * 20 environments × 50 rows of 1,000-change runs held 13 MB of heap as whole rows).
 */
import path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import type { RunReport } from "../../src/run/run-report.js";
import type { RunHistory } from "../../src/daemon/history/run-history.js";
import { leaderRunView } from "../helpers/run-view.js";
import { runsPage } from "../../src/daemon/ui/runs-page.js";
import type { Plan } from "../../src/plan/plan.js";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import { applySummary } from "../helpers/apply-summary.js";
import { tempRepo } from "../helpers/temp-repo.js";

const changes = 1_000;
const ids = Array.from({ length: changes }, (_, i) => `OrgKey/key-${String(i).padStart(4, "0")}`);

function bigReport(n: number): RunReport {
  const calls = { gateway: changes, portal: 0, dashboard: 0, llm: 0, mail: 0, batchCalls: 0, batched: 0, total: changes, checks: 0, retries: 0, pauses: 0 };
  const at = new Date(Date.UTC(2026, 10, 28, 0, n)).toISOString();
  return {
    reason: "webhook",
    startedAt: at,
    finishedAt: at,
    durationMs: 900 + n,
    result: "applied",
    revision: `r${n}`,
    commit: n.toString(16).padStart(40, "0"),
    summary: applySummary({ applied: ids, calls, durationMs: 900 + n }),
  };
}

const plan = { changes: ids.map((id) => ({ id, kind: "OrgKey", name: id.slice(7), action: "update", wave: 0, fields: [], notes: [] })) } as unknown as Plan;

describe("the run view", () => {
  const stores: SqliteStateBackend[] = [];
  afterEach(async () => {
    for (const s of stores.splice(0)) await s.close();
  });

  async function viewOf(file: string): Promise<RunHistory> {
    const store = new SqliteStateBackend(file);
    stores.push(store);
    const history = leaderRunView(store);
    history.start();
    await history.settled();
    return history;
  }

  it("holds 50 runs of 1,000 changes as lines, and gives each run's lists back from the state", async () => {
    const file = path.join(await tempRepo({}), "state.db");
    const writer = await viewOf(file);
    for (let n = 0; n < 60; n++) writer.runFinished(bigReport(n), plan);
    await writer.settled();

    // a restarted daemon's view, read from the state
    const history = await viewOf(file);
    const lines = history.entries();
    expect(lines).toHaveLength(50);
    expect(lines.map((l) => l.record.revision).slice(0, 2)).toEqual(["r59", "r58"]);
    expect(lines[0]!.record).toMatchObject({ outcome: "applied", counts: { applied: changes, changes }, calls: { total: changes } });
    // no list in the lines: 50 of them in a few kilobytes (whole, each row alone is some 10 KB)
    expect(lines.some((l) => "report" in l.record || "changes" in l.record)).toBe(false);
    expect(JSON.stringify(lines).length).toBeLessThan(50 * 1_000);
    // the newest whole (/status's plan, the overview's last run)
    expect(history.newest()?.record.changes).toHaveLength(100);

    // the runs page reads the rows whole: an older run's changes are listed
    const rows = await history.rows();
    expect(rows?.map((r) => r.seq)).toEqual(lines.map((l) => l.seq));
    expect(rows?.[49]?.record.changes).toHaveLength(100);
    const page = runsPage(rows).text;
    expect(page).toContain(`update OrgKey/key-0099`);
    expect(page).toContain("… and 900 more");
    // a resource's own history, from the same rows
    expect((await history.historyOf("OrgKey/key-0042"))?.map((h) => h.commit)).toHaveLength(50);
  });
});
