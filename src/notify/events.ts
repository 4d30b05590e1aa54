/**
 * What a run means to the people watching it: notification events and the commit status,
 * derived from the run's report. Pure. A failure is reported once while it stays the same
 * (the loop retries a failing run often); `recovered` closes it.
 */
import type { RunReport } from "../run/run-report.js";
import { settlesOnNextApply } from "../plan/in-doubt.js";
import type { EventName } from "../config/notifications.js";
import { checkFailuresOf } from "../apply/health-text.js";

export interface NotificationEvent {
  readonly event: EventName;
  readonly at: string;
  readonly commit?: string;
  readonly revision?: string;
  /** One line for people. */
  readonly summary: string;
  readonly failed?: ReadonlyArray<{ readonly id: string; readonly message: string }>;
  readonly inDoubt?: ReadonlyArray<{ readonly id: string; readonly message: string }>;
  readonly errors?: number;
  readonly error?: string;
  /** Post-apply checks that failed, one line each: the check, expected against got, the answer's excerpt (apply/health-text.ts). */
  readonly checks?: readonly string[];
  readonly leader?: boolean;
}

/** A commit status: GitHub's and GitLab's states are derived from it. */
export type CommitState = "pending" | "success" | "failure" | "needs-person";

export interface CommitStatus {
  readonly commit: string;
  readonly state: CommitState;
  /** At most 140 characters (GitHub's limit). */
  readonly description: string;
}

const failing = new Set(["partial", "error", "source-error", "invalid"]);

export function isFailing(report: RunReport): boolean {
  return failing.has(report.result);
}

const where = (r: RunReport): { commit?: string; revision?: string } => ({
  ...(r.commit === undefined ? {} : { commit: r.commit }),
  ...(r.revision === undefined ? {} : { revision: r.revision }),
});
const short = (r: RunReport): string => (r.commit ?? r.revision ?? "").slice(0, 12);
const plural = (n: number, one: string): string => `${n} ${one}${n === 1 ? "" : "s"}`;

/** The events of one finished run, and the key that identifies its failure (undefined when it did not fail). */
export function eventsOfRun(report: RunReport, lastFailure: string | undefined): { events: NotificationEvent[]; failure: string | undefined } {
  const at = report.finishedAt;
  const events: NotificationEvent[] = [];
  const checks = checkFailuresOf(report.summary?.health ?? []);
  if (!isFailing(report) && checks.length > 0) return checksFailed(report, checks, lastFailure);
  if (!isFailing(report)) {
    if (lastFailure !== undefined && (report.result === "applied" || report.result === "noop")) {
      events.push({
        event: "recovered",
        at,
        ...where(report),
        summary: `gatesync recovered: ${short(report) === "" ? "the last run" : short(report)} applied cleanly`,
      });
    }
    return { events, failure: undefined };
  }
  const failed = report.summary?.failed ?? [];
  const inDoubt = report.summary?.inDoubt ?? [];
  const errors = report.diagnostics?.filter((d) => d.severity === "error").length ?? 0;
  // the same broken revision is reported again on every run, without its error: one key for it
  const failure = JSON.stringify(
    report.result === "invalid"
      ? [report.result, report.revision]
      : [report.result, report.revision, report.error, failed.map((f) => f.id), inDoubt.map((f) => f.id)],
  );
  if (failure === lastFailure) return { events, failure };
  if (report.result === "invalid") {
    events.push({
      event: "commit-refused",
      at,
      ...where(report),
      errors,
      summary: `commit ${short(report)} refused by validation (${plural(errors, "error")}): nothing applied, the last good commit stays in force`,
    });
  } else if (report.result === "error" || report.result === "source-error" || failed.length > 0) {
    const what = failed.length > 0 ? `${plural(failed.length, "resource")} failed` : (report.error ?? report.result);
    events.push({
      event: "run-failed",
      at,
      ...where(report),
      failed,
      ...(report.error === undefined ? {} : { error: report.error }),
      summary: `gatesync run failed at ${short(report) || "the current revision"}: ${what}`,
    });
  }
  if (inDoubt.length > 0) {
    events.push({
      event: "in-doubt",
      at,
      ...where(report),
      inDoubt,
      summary: inDoubtSummary(
        inDoubt.map((d) => d.id),
        short(report),
      ),
    });
  }
  return { events, failure };
}

/** A run that applied, but whose post-apply checks failed: told once while they fail alike, with why. */
function checksFailed(report: RunReport, checks: readonly string[], lastFailure: string | undefined): { events: NotificationEvent[]; failure: string } {
  const failure = JSON.stringify(["checks", report.revision, checks]);
  if (failure === lastFailure) return { events: [], failure };
  const summary = `gatesync applied ${short(report) || "the current revision"}, but ${plural(checks.length, "post-apply check")} failed: ${checks[0]}`;
  return { events: [{ event: "run-failed", at: report.finishedAt, ...where(report), failed: [], checks, summary }], failure };
}

/** The commit status a finished run leaves, when it ran on a commit. */
export function finalStatus(report: RunReport): CommitStatus | undefined {
  if (report.commit === undefined || report.result === "standby" || report.result === "source-error") return undefined;
  const inDoubt = report.summary?.inDoubt.length ?? 0;
  const needPerson = needingPerson(report.summary?.inDoubt.map((d) => d.id) ?? []).length;
  const failed = report.summary?.failed.length ?? 0;
  const cut = (s: string): string => (s.length > 140 ? `${s.slice(0, 139)}…` : s);
  if (report.result === "invalid") {
    const errors = report.diagnostics?.filter((d) => d.severity === "error").length ?? 0;
    return { commit: report.commit, state: "failure", description: cut(`refused by validation: ${plural(errors, "error")}; nothing applied`) };
  }
  if (needPerson > 0)
    return {
      commit: report.commit,
      state: "needs-person",
      description: cut(`needs a person: ${plural(needPerson, "resource")} in doubt${failed > 0 ? `, ${failed} failed` : ""}`),
    };
  if (report.result !== "error" && failed === 0 && inDoubt > 0)
    // only upserts in doubt: applied once the next run writes them again
    return { commit: report.commit, state: "pending", description: cut(`${plural(inDoubt, "resource")} in doubt, written again by the next run`) };
  if (report.result === "error" || failed > 0)
    return {
      commit: report.commit,
      state: "failure",
      description: cut(failed > 0 ? `${plural(failed, "resource")} failed to apply` : `run failed: ${report.error ?? "error"}`),
    };
  const applied = report.summary?.applied.length ?? 0;
  return { commit: report.commit, state: "success", description: cut(report.result === "noop" ? "in sync" : `applied: ${plural(applied, "change")}`) };
}

/** The ids in doubt whose kind does not settle by the next apply (see plan/in-doubt.ts). */
function needingPerson(ids: readonly string[]): readonly string[] {
  return ids.filter((id) => !settlesOnNextApply(id.split("/")[0]!));
}

/**
 * What an in-doubt event says: an org key's write is simply written again by the next apply (its
 * quota reset never), so only the others are a person's to settle — asking for all of them sent
 * people to `state resolve` keys that needed nothing.
 */
function inDoubtSummary(ids: readonly string[], at: string): string {
  const person = needingPerson(ids).length;
  const itself = ids.length - person;
  const parts = [
    ...(person > 0 ? [`${person === ids.length ? "" : `${person} `}for a person to settle (gatesync state resolve)`] : []),
    ...(itself > 0 ? [`${itself === ids.length ? "" : `${itself} `}written again by the next apply, nothing to do`] : []),
  ];
  return `${plural(ids.length, "resource")} in doubt at ${at}: ${parts.join("; ")}`;
}
