/**
 * The daemon's spans (docs/user/telemetry.md): one root `gatesync.run` per run, with its
 * trigger, revision, outcome and counts — the child of a webhook's or `/sync` request's
 * `traceparent` when it carried one — and the source fetch below it.
 */
import type { RunReport } from "../apply/run-report.js";
import { withSpan } from "../telemetry/spans.js";

/** The counts a run's root span carries: its plan's changes by action and its apply's outcomes. */
function countsOf(report: RunReport): Record<string, number | undefined> {
  const s = report.summary;
  return {
    "gatesync.changes.create": report.plan?.create,
    "gatesync.changes.update": report.plan?.update,
    "gatesync.changes.blocked": report.plan?.blocked,
    "gatesync.changes.breaking": report.plan?.breaking,
    "gatesync.applied": s?.applied.length,
    "gatesync.failed": s?.failed.length,
    "gatesync.in_doubt": s?.inDoubt.length,
    "gatesync.calls.total": s?.calls.total,
    "gatesync.findings.errors": report.diagnostics?.filter((d) => d.severity === "error").length,
  };
}

/** One daemon run in its root span. */
export async function inRunSpan(reason: string, traceparent: string | undefined, work: () => Promise<RunReport>): Promise<RunReport> {
  return withSpan("gatesync.run", { attributes: { "gatesync.trigger": reason }, ...(traceparent === undefined ? {} : { traceparent }) }, async (span) => {
    const report = await work();
    span.set({ "gatesync.outcome": report.result, "gatesync.revision": report.revision, "gatesync.commit": report.commit, ...countsOf(report) });
    return report;
  });
}

/** The source's fetch, in a `gatesync.source.fetch` span naming the revision it gave. */
export async function inFetchSpan<T extends { readonly revision: string }>(work: () => Promise<T>): Promise<T> {
  return withSpan("gatesync.source.fetch", {}, async (span) => {
    const snapshot = await work();
    span.set({ "gatesync.revision": snapshot.revision });
    return snapshot;
  });
}
