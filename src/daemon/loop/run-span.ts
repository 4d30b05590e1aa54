/**
 * The daemon's spans (docs/user/telemetry.md): one root `gatesync.run` per run, with its
 * environment, trigger, revision and outcome — the child of a webhook's or `/sync` request's
 * `traceparent` when it carried one — and the source fetch below it. The counts on the root
 * (findings, changes, applied …) are noted by the validation, the plan and the apply as they
 * count them (`noteOnRun`), as they are on a command's root.
 */
import type { RunReport } from "../../run/run-report.js";
import { checkFailuresOf } from "../../apply/health-text.js";
import { withSpan } from "../../telemetry/spans.js";

/** What a run is started for: why, for which environment, and the trace it joins. */
export interface RunCause {
  readonly reason: string;
  readonly environment: string;
  readonly traceparent: string | undefined;
}

/** One daemon run in its root span. */
export async function inRunSpan(cause: RunCause, work: () => Promise<RunReport>): Promise<RunReport> {
  const attributes = { "gatesync.trigger": cause.reason, "gatesync.environment": cause.environment };
  const parent = cause.traceparent === undefined ? {} : { traceparent: cause.traceparent };
  return withSpan("gatesync.run", { attributes, ...parent, root: true, sideBySide: true }, async (span) => {
    const report = await work();
    const checkFailures = checkFailuresOf(report.summary?.health ?? []);
    span.set({
      "gatesync.outcome": report.result,
      "gatesync.revision": report.revision,
      "gatesync.commit": report.commit,
      // why a post-apply check failed, on the run itself: the run may still say applied
      "gatesync.checks.failures": checkFailures.length === 0 ? undefined : checkFailures.join("\n"),
    });
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
