/**
 * Verification and promotion rows of an environment's history (record/promotion-history.ts), on
 * both backends: written by one handle and read by another (a promotion is a record of the shared
 * state, not a message), each kind read apart from the runs, and the newest promotion kept however
 * many runs and however much time follow it — the revision in force is never forgotten.
 */
import { afterAll, describe, expect, it } from "vitest";
import type { HistoryBound } from "../../src/config/history-section.js";
import { defaultHistoryBound } from "../../src/config/history-section.js";
import type { HistoryRecord } from "../../src/record/history/history.js";
import { readPromotions, readVerifications } from "../../src/record/history/promotion-history.js";
import type { PromotionRecord, VerificationRecord } from "../../src/record/history/promotion-history.js";
import { dropTestSchemas } from "../helpers/postgres.js";
import { stateBackends } from "../helpers/state-backends.js";
import { removeTempRepos } from "../helpers/temp-repo.js";

afterAll(async () => {
  await dropTestSchemas();
  await removeTempRepos();
});

const at = (minutesAgo: number): string => new Date(Date.now() - minutesAgo * 60_000).toISOString();

const verification = (revision: string, minutesAgo = 0): VerificationRecord => ({
  kind: "verification",
  revision,
  commit: revision,
  subject: `change ${revision}`,
  soakMs: 600_000,
  startedAt: at(minutesAgo + 10),
  finishedAt: at(minutesAgo),
});

const promotion = (revision: string, minutesAgo = 0, rollback = false): PromotionRecord => ({
  kind: "promotion",
  revision,
  commit: revision,
  from: rollback ? "production" : "staging",
  actor: rollback ? { by: "rollback", token: "GATESYNC_PROMOTE_TOKEN" } : { by: "token", token: "GATESYNC_PROMOTE_TOKEN" },
  rollback,
  startedAt: at(minutesAgo),
  finishedAt: at(minutesAgo),
});

// a run row as the store sees it: its own shape is daemon/run-record.ts's business
const runRow = (n: number, minutesAgo = 0): HistoryRecord =>
  ({ kind: "run", startedAt: at(minutesAgo), finishedAt: at(minutesAgo), trigger: `t${n}` }) as HistoryRecord;

describe.each(stateBackends)("%s promotion history", (_name, open) => {
  it("keeps verifications and promotions apart from the runs, newest first, read by another handle", async () => {
    const handle = await open();
    const [writer, reader] = [handle(), handle()];
    try {
      await writer.appendHistory({ record: verification("aaa1") }, defaultHistoryBound);
      await writer.appendHistory({ record: runRow(1) }, defaultHistoryBound);
      await writer.appendHistory({ record: promotion("aaa1") }, defaultHistoryBound);
      await writer.appendHistory({ record: verification("bbb2") }, defaultHistoryBound);
      await writer.appendHistory({ record: promotion("aaa0", 0, true) }, defaultHistoryBound);
      expect((await readVerifications(reader, 10)).map((e) => e.record.revision)).toEqual(["bbb2", "aaa1"]);
      const promotions = await readPromotions(reader, 10);
      expect(promotions.map((e) => [e.record.revision, e.record.rollback, e.record.actor.by])).toEqual([
        ["aaa0", true, "rollback"],
        ["aaa1", false, "token"],
      ]);
      expect((await reader.readHistory({ kind: "run", limit: 10 })).map((e) => e.record.kind)).toEqual(["run"]);
    } finally {
      await writer.close();
      await reader.close();
    }
  });

  it("bounds each kind apart: a burst of runs prunes no promotion or verification, each kind keeps its own newest `keep`, only runs go by age", async () => {
    const state = (await open())();
    try {
      const bound: HistoryBound = { keep: 3, maxAgeMs: 60 * 60_000 };
      // promotions and verifications older than the age bound: still where a rollback goes
      for (const [n, revision] of ["old1", "old2", "old3", "inforce"].entries()) {
        await state.appendHistory({ record: promotion(revision, 400 - n * 100) }, bound);
        await state.appendHistory({ record: verification(revision, 400 - n * 100) }, bound);
      }
      await state.appendHistory({ record: runRow(0, 300) }, bound);
      for (let n = 1; n <= 20; n++) await state.appendHistory({ record: runRow(n) }, bound);
      expect((await readPromotions(state, 10)).map((e) => e.record.revision)).toEqual(["inforce", "old3", "old2"]);
      expect((await readVerifications(state, 10)).map((e) => e.record.revision)).toEqual(["inforce", "old3", "old2"]);
      const runs = await state.readHistory({ kind: "run", limit: 10 });
      expect(runs.map((e) => (e.record as unknown as { trigger: string }).trigger)).toEqual(["t20", "t19", "t18"]);
      // the age bound takes old runs even under the count, and keeps the newest run whatever its age
      await state.appendHistory({ record: runRow(21, 200) }, { keep: 10, maxAgeMs: 60 * 60_000 });
      expect((await state.readHistory({ kind: "run", limit: 10 })).map((e) => (e.record as unknown as { trigger: string }).trigger)).toEqual([
        "t21",
        "t20",
        "t19",
        "t18",
      ]);
    } finally {
      await state.close();
    }
  });
});
