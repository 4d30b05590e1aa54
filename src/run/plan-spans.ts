/**
 * The plan's spans (docs/user/telemetry.md): load and validate with their finding counts, the
 * plan with its changes by action. The run's root span (a daemon run, a command) gets the
 * counts an operator reads a run by: the errors found, the changes planned, the commit.
 */
import type { Diagnostic } from "../errors.js";
import { noteOnRun, withSpan, withSpanSync } from "../telemetry/spans.js";
import type { Plan } from "../plan/plan.js";

/** Loading and validating the repository, in a `gatesync.validate` span that counts what it found. */
export async function tracedValidation<
  T extends { readonly resources: readonly unknown[]; readonly diagnostics: readonly Diagnostic[]; readonly files: number },
>(work: () => Promise<T>): Promise<T> {
  return withSpan("gatesync.validate", {}, async (span) => {
    const result = await work();
    const errors = result.diagnostics.filter((d) => d.severity === "error").length;
    span.set({
      "gatesync.files": result.files,
      "gatesync.resources": result.resources.length,
      "gatesync.findings.errors": errors,
      "gatesync.findings.warnings": result.diagnostics.length - errors,
    });
    noteOnRun({ "gatesync.findings.errors": errors });
    return result;
  });
}

/** The planner's work, in a `gatesync.plan` span with the changes by action and the breaking count. */
export function tracedPlan(work: () => Plan): Plan {
  return withSpanSync("gatesync.plan", {}, (span) => {
    const plan = work();
    const s = plan.summary;
    span.set({
      "gatesync.changes.create": s.create,
      "gatesync.changes.update": s.update,
      "gatesync.changes.noop": s.noop,
      "gatesync.changes.blocked": s.blocked,
      "gatesync.changes.orphan": s.orphan,
      "gatesync.changes.breaking": s.breaking,
      "gatesync.calls.total": s.calls.total,
      "gatesync.revision": plan.commit,
    });
    noteOnRun({
      "gatesync.changes.create": s.create,
      "gatesync.changes.update": s.update,
      "gatesync.changes.blocked": s.blocked,
      "gatesync.changes.breaking": s.breaking,
      "gatesync.revision": plan.commit,
    });
    return plan;
  });
}
