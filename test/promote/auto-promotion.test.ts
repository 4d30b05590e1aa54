/**
 * `promotion: auto`'s step (src/promotion/auto-promotion.ts) over two real SQLite states: the
 * gate's verdict on a candidate is kept while what it read is unchanged, and judged again once
 * the source's state is written — a candidate refused because a post-apply check failed in
 * staging is promoted once that check passes there, without a new commit or a restart; the
 * daemon's gatesync_promotions_total is told each verdict once.
 */
import path from "node:path";
import { afterAll, describe, expect, it } from "vitest";
import { defaultHistoryBound } from "../../src/config/history-section.js";
import type { GatesyncConfig } from "../../src/config/config.js";
import { autoPromote } from "../../src/promotion/auto-promotion.js";
import { selectionRefusal } from "../../src/promotion/gates.js";
import type { PromotionParts, PromotionUnit } from "../../src/promotion/promotion.js";
import { readPromotions } from "../../src/record/history/promotion-history.js";
import type { VerificationRecord } from "../../src/record/history/promotion-history.js";
import { SqliteStateBackend } from "../../src/record/sqlite/sqlite-backend.js";
import type { StateBackend } from "../../src/record/state.js";
import { heldPayload } from "../../src/record/wrappers/lazy-record.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const revision = "aaaa1111bbbb2222cccc3333dddd4444eeee5555";
const acme = "OrgKey/acme";

afterAll(removeTempRepos);

async function sqliteState(): Promise<StateBackend> {
  const state = new SqliteStateBackend(path.join(await tempRepo(), "state.db"));
  const lock = await state.lock("auto-promotion test");
  await state.initialise(undefined);
  await lock.release();
  return state;
}

/** Staging's record of acme as a run leaves it: applied, its post-apply check passing or failing. */
async function acmeChecked(state: StateBackend, ok: boolean): Promise<void> {
  const lock = await state.lock("auto-promotion test");
  const at = new Date().toISOString();
  const health = { ok, checkedAt: at, results: [], ...(ok ? {} : { reason: "GET keys/org-acme: expected 200, got 500" }) };
  await state.write({ id: acme, kind: "OrgKey", name: "acme", address: {}, status: "applied", health: heldPayload(health), createdAt: at, updatedAt: at });
  await lock.release();
}

function unitOf(name: string, state: StateBackend, settings: Partial<GatesyncConfig>): PromotionUnit {
  const config = { ...settings, history: defaultHistoryBound } as unknown as GatesyncConfig;
  return {
    name,
    config,
    state,
    history: { reread: () => Promise.resolve(), entries: () => [] },
    reconciler: { configInForce: { config }, trigger: () => undefined },
    notifier: undefined,
  };
}

/**
 * The selection gate as it judges staging's state (promotion.ts: escapedSource): production's plan
 * would change acme, which staging's plan held — refused while acme's check fails in staging.
 * Counts its verdicts.
 */
function stateGate(): { readonly gate: NonNullable<PromotionParts["autoGate"]>; readonly judged: () => number } {
  let judged = 0;
  const gate: NonNullable<PromotionParts["autoGate"]> = async (_parts, _unit, from, candidate) => {
    judged++;
    const record = (await from.state.read()).resources.get(acme);
    const health = record?.health?.read();
    const failing = new Map(health === undefined || health.ok ? [] : [[acme, health.reason ?? "failing"]]);
    const applied = new Set(record?.status === "applied" ? [acme] : []);
    return selectionRefusal(candidate, from.name, [{ id: acme, orphan: false }], { judged: new Set([acme]), applied, failing });
  };
  return { gate, judged: () => judged };
}

describe("promotion: auto's gate verdict", () => {
  it("is kept while the states are unchanged, and a refusal lifts once the check recovers in staging", async () => {
    const [stagingState, productionState] = [await sqliteState(), await sqliteState()];
    const verified: VerificationRecord = {
      kind: "verification",
      revision,
      soakMs: 0,
      startedAt: new Date().toISOString(),
      finishedAt: new Date().toISOString(),
    };
    await stagingState.appendHistory({ record: verified }, defaultHistoryBound);
    await acmeChecked(stagingState, false);
    const units = new Map([
      ["staging", unitOf("staging", stagingState, { track: { branch: "main" } })],
      ["production", unitOf("production", productionState, { track: { promotedFrom: "staging" }, promotion: { mode: "auto", soakMs: 0 } })],
    ]);
    const { gate, judged } = stateGate();
    const outcomes: string[] = [];
    const observe: PromotionParts["observe"] = (name, o) => outcomes.push(`${name} ${o.kind} ${o.actor} ${o.result}`);
    const parts = { unit: (n: string) => units.get(n), autoGate: gate, observe } as unknown as PromotionParts;

    await autoPromote(parts, "production");
    await autoPromote(parts, "production");
    expect(await readPromotions(productionState, 10)).toEqual([]);
    // nothing either state holds changed: the second decision took the first's verdict
    expect(judged()).toBe(1);
    // gatesync_promotions_total counts the refusal once: the second decision judged nothing new
    expect(outcomes).toEqual(["production promotion auto refused"]);

    // staging's next run finds acme's check passing again: its record is written, the candidate unchanged
    await acmeChecked(stagingState, true);
    await autoPromote(parts, "production");
    expect(judged()).toBe(2);
    const promotions = await readPromotions(productionState, 10);
    expect(promotions.map((p) => p.record)).toMatchObject([{ revision, from: "staging", actor: { by: "auto" } }]);
    expect(outcomes).toEqual(["production promotion auto refused", "production promotion auto recorded"]);
    await stagingState.close();
    await productionState.close();
  });
});
