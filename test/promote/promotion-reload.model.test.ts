/**
 * A model of the promotion settings under reloads (docs/user/promotion.md): random interleavings
 * of reloads (production's `promotion:`, staging's `soak`), staging runs (healthy or failing),
 * the clock moving (so the verifier's soak timer fires: the run it asks for is a healthy run of
 * staging's revision) and production's decisions (each run of a promoted environment asks
 * `autoPromote` before its fetch). The real Verifier and autoPromote run over an in-memory history; the model
 * holds the settings in force. Every decision is judged under the settings in force when it is
 * taken: an automatic promotion only while `promotion: auto` is in force, always then for a newer
 * candidate; a verification records the soak in force when it was granted, and its runs span it.
 */
import fc from "fast-check";
import { afterEach, beforeEach, describe, expect, it, vi } from "vitest";
import { defaultHistoryBound } from "../../src/config/history-section.js";
import type { GatesyncConfig } from "../../src/config/config.js";
import { silentLogger } from "../../src/logger.js";
import type { HistoryDraft, HistoryEntry, HistoryQuery, HistoryStore } from "../../src/record/history/history.js";
import { readPromotions, readVerifications } from "../../src/record/history/promotion-history.js";
import { autoPromote } from "../../src/promotion/auto-promotion.js";
import type { PromotionParts, PromotionUnit } from "../../src/promotion/promotion.js";
import type { RunLine, RunRecord } from "../../src/daemon/history/run-record.js";
import { Verifier, verificationFactOf } from "../../src/promotion/verifier.js";
import { standingOf } from "../../src/promotion/verification.js";

class MemoryHistory implements HistoryStore {
  private rows: HistoryEntry[] = [];
  /** As a state answers it: history rows never move its serial (the gate's verdict is kept across them). */
  readVersion(): Promise<{ lineage: string; serial: number }> {
    return Promise.resolve({ lineage: "model", serial: 0 });
  }
  appendHistory(draft: HistoryDraft): Promise<HistoryEntry> {
    const at = draft.record.finishedAt;
    const entry: HistoryEntry = { seq: this.rows.length + 1, record: draft.record, repeats: 0, firstAt: draft.record.startedAt, lastAt: at };
    this.rows.push(entry);
    return Promise.resolve(entry);
  }
  readHistory(query: HistoryQuery): Promise<HistoryEntry[]> {
    return Promise.resolve(
      this.rows
        .filter((r) => r.record.kind === query.kind)
        .reverse()
        .slice(0, query.limit),
    );
  }
}

type Command =
  | { readonly op: "reload"; readonly mode: "auto" | "manual"; readonly soakMs: number }
  | { readonly op: "run"; readonly revision: string; readonly ok: boolean }
  | { readonly op: "advance"; readonly ms: number }
  | { readonly op: "decide" };

const command: fc.Arbitrary<Command> = fc.oneof(
  fc.record({
    op: fc.constant("reload" as const),
    mode: fc.constantFrom("auto" as const, "manual" as const),
    soakMs: fc.constantFrom(0, 1_000, 5_000, 20_000, 30_000),
  }),
  fc.record({ op: fc.constant("run" as const), revision: fc.constantFrom("aaaa1111", "bbbb2222", "cccc3333"), ok: fc.boolean() }),
  fc.record({ op: fc.constant("advance" as const), ms: fc.integer({ min: 100, max: 40_000 }) }),
  fc.constant({ op: "decide" as const }),
);

/** A run row as the daemon writes it, as far as the rules read it. */
function runRow(revision: string, ok: boolean): RunRecord {
  const now = new Date().toISOString();
  const counts = { applied: 0, failed: ok ? 0 : 1, inDoubt: 0, blocked: 0, skipped: 0, changes: 0, calls: 0 };
  return {
    kind: "run",
    trigger: "test",
    outcome: ok ? "noop" : "partial",
    revision,
    counts,
    durationMs: 1,
    replica: "model",
    synced: ok,
    report: { reason: "test", startedAt: now, finishedAt: now, durationMs: 1, result: ok ? "noop" : "partial" },
    changes: [],
    startedAt: now,
    finishedAt: now,
  };
}

interface World {
  readonly parts: PromotionParts;
  readonly staging: { settings: { mode: "manual"; soakMs: number }; history: MemoryHistory; current: string | undefined };
  readonly production: { settings: { mode: "auto" | "manual"; soakMs: number }; history: MemoryHistory };
  readonly verifier: Verifier;
  readonly runStaging: (revision: string, ok: boolean) => Promise<void>;
}

function unitOf(name: string, history: MemoryHistory, settings: { mode: string; soakMs: number }, track: GatesyncConfig["track"]): PromotionUnit {
  const config = (): GatesyncConfig =>
    ({ track, promotion: { mode: settings.mode, soakMs: settings.soakMs }, history: defaultHistoryBound }) as unknown as GatesyncConfig;
  return {
    name,
    config: config(),
    state: history as unknown as PromotionUnit["state"],
    history: {
      reread: () => Promise.resolve(),
      entries: () => [] as RunLine[],
    },
    reconciler: {
      get configInForce() {
        return { config: config(), hash: "h" };
      },
      trigger: () => undefined,
    },
    notifier: undefined,
  };
}

function world(): World & { pendingTimerRuns: string[] } {
  const stagingHistory = new MemoryHistory();
  const staging = { settings: { mode: "manual" as const, soakMs: 5_000 }, history: stagingHistory, current: undefined as string | undefined };
  const production = { settings: { mode: "auto" as "auto" | "manual", soakMs: 0 }, history: new MemoryHistory() };
  const runs = async (): Promise<RunLine[]> => (await stagingHistory.readHistory({ kind: "run", limit: 1_000 })) as RunLine[];
  const units = new Map<string, PromotionUnit>();
  const stagingUnit = unitOf("staging", stagingHistory, staging.settings, { branch: "main" });
  let cachedRuns: RunLine[] = [];
  units.set("staging", {
    ...stagingUnit,
    history: { reread: async () => void (cachedRuns = await runs()), entries: () => cachedRuns },
  });
  units.set("production", unitOf("production", production.history, production.settings, { promotedFrom: "staging" }));
  // the decisions alone: every candidate passes the selection gate (test/daemon/promotion-gate.e2e.test.ts proves the gate)
  const parts = { unit: (n: string) => units.get(n), autoGate: () => Promise.resolve(undefined) } as unknown as PromotionParts;
  const runStaging = async (revision: string, ok: boolean): Promise<void> => {
    staging.current = revision;
    await stagingHistory.appendHistory({ record: runRow(revision, ok) });
    verifier.runEnded();
    await verifier.settled();
  };
  const verifier: Verifier = new Verifier({
    state: stagingHistory,
    bound: () => defaultHistoryBound,
    soakMs: () => staging.settings.soakMs,
    runs,
    leads: () => true,
    // the run the soak's end asks for: a healthy run of the revision staging has
    trigger: () => void (staging.current === undefined ? undefined : pendingTimerRuns.push(staging.current)),
    onVerified: () => undefined,
    logger: silentLogger(),
  });
  const pendingTimerRuns: string[] = [];
  return Object.assign({ parts, staging, production, verifier, runStaging }, { pendingTimerRuns });
}

beforeEach(() => {
  vi.useFakeTimers({ now: Date.parse("2026-01-01T00:00:00Z"), toFake: ["setTimeout", "clearTimeout", "Date"] });
});
afterEach(() => {
  vi.useRealTimers();
});

async function step(w: World & { pendingTimerRuns: string[] }, c: Command): Promise<void> {
  if (c.op === "reload") {
    w.production.settings.mode = c.mode;
    w.staging.settings.soakMs = c.soakMs;
    // a reload asks each environment for a run: staging's run re-judges its soak under the new one
    if (w.staging.current !== undefined) await w.runStaging(w.staging.current, true);
    return;
  }
  if (c.op === "run") return w.runStaging(c.revision, c.ok);
  if (c.op === "advance") {
    await vi.advanceTimersByTimeAsync(c.ms);
    for (const revision of w.pendingTimerRuns.splice(0)) await w.runStaging(revision, true);
    return;
  }
  const before = await readPromotions(w.production.history, 1_000);
  // the newest verification that stands: a later failing run of its revision withdrew any newer one (promotion.md)
  const newest = standingOf((await readVerifications(w.staging.history, 1_000)).map(verificationFactOf))[0];
  const inForce = before[0]?.record;
  await autoPromote(w.parts, "production");
  const after = await readPromotions(w.production.history, 1_000);
  if (w.production.settings.mode === "manual") {
    expect(after.length, "promoted under promotion: manual").toBe(before.length);
    return;
  }
  const newer = newest !== undefined && (inForce === undefined || (newest.revision !== inForce.revision && newest.at > Date.parse(inForce.finishedAt)));
  expect(after.length).toBe(before.length + (newer ? 1 : 0));
  if (newer) expect(after[0]!.record).toMatchObject({ revision: newest.revision, actor: { by: "auto" } });
}

describe("promotion settings under reloads (model)", () => {
  it("every decision is taken under the settings in force when it is taken", async () => {
    await fc.assert(
      fc.asyncProperty(fc.array(command, { minLength: 1, maxLength: 30 }), async (commands) => {
        const w = world();
        for (const c of commands) {
          const seen = (await readVerifications(w.staging.history, 1_000)).length;
          await step(w, c);
          const rows = await readVerifications(w.staging.history, 1_000);
          // a verification granted by this step: under the soak in force now, its runs spanning it
          // (a withdrawal is a row of that kind too: a later failing run's, not a grant)
          for (const v of rows.slice(0, rows.length - seen).filter((row) => row.record.withdrawn === undefined)) {
            expect(v.record.soakMs).toBe(w.staging.settings.soakMs);
            expect(Date.parse(v.record.finishedAt) - Date.parse(v.record.startedAt)).toBeGreaterThanOrEqual(v.record.soakMs);
          }
        }
        w.verifier.stop();
      }),
      { numRuns: 150 },
    );
  });
});
