import type { ApplySummary } from "../../src/apply/types.js";

/** An apply's summary that did nothing, with `over` put over it (tests' and the bench's runs). */
export function applySummary(over: Partial<ApplySummary> = {}): ApplySummary {
  return {
    applied: [],
    failed: [],
    inDoubt: [],
    blocked: [],
    unchanged: 0,
    orphans: [],
    moved: [],
    adopted: [],
    quotaResets: 0,
    health: [],
    calls: { gateway: 0, portal: 0, dashboard: 0, llm: 0, batchCalls: 0, batched: 0, total: 0, checks: 0, retries: 0, pauses: 0 },
    skipped: [],
    durationMs: 0,
    ...over,
  };
}
