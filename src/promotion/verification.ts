/**
 * When a revision is verified in an environment (docs/user/promotion.md), as a pure rule over the
 * environment's runs: it was applied with nothing failed, in doubt or blocked and its post-apply
 * checks healthy, and from that run on every run of the environment was such a run of the same
 * revision for at least `soak` — the last of them at or after the soak's end (the daemon asks for
 * a run when the soak ends). A run that fetched nothing (the source unreachable) or ran nothing
 * (a standby's turn) says nothing either way. The rule reads the runs again each time — the rows
 * of the state, not a memory of this process — so a restart or another replica judges alike.
 */

/** What one run (or a run row with its quiet repeats) says of the revision it ran. */
export interface RunFact {
  readonly revision: string | undefined;
  /** When its first run ended (a row with quiet repeats: when the first of them started), ms since the epoch. */
  readonly firstAt: number;
  /** When its last run ended. */
  readonly lastAt: number;
  /** `ok`: applied or nothing to do, synced, healthy; `failed`: anything else a run of a revision ends with; `neutral`: says nothing. */
  readonly verdict: "ok" | "failed" | "neutral";
  /** Why a failed run failed, as a person reads it. */
  readonly problem?: string;
}

/** The run of one revision since which every run was a healthy run of it. */
export interface Streak {
  readonly revision: string;
  /** When the first healthy run of the streak ended. */
  readonly since: number;
  /** When its newest run ended. */
  readonly until: number;
}

/** The streak the newest runs make (runs newest first); undefined when the newest telling run failed. */
export function streakOf(runs: readonly RunFact[]): Streak | undefined {
  let streak: Streak | undefined;
  for (const run of runs) {
    if (run.verdict === "neutral") continue;
    if (run.verdict === "failed" || run.revision === undefined) break;
    if (streak !== undefined && run.revision !== streak.revision) break;
    streak = { revision: run.revision, since: run.firstAt, until: streak?.until ?? run.lastAt };
  }
  return streak;
}

/** The streak's revision is verified: its runs span the soak. */
export const soaked = (streak: Streak, soakMs: number): boolean => streak.until - streak.since >= soakMs;

/** When the streak's soak ends (the daemon runs then, to see it through). */
export const soakEndsAt = (streak: Streak, soakMs: number): number => streak.since + soakMs;

/** What a run row records, as far as the rule reads it (daemon/run-record.ts has the whole row). */
export interface RunOutcome {
  readonly outcome: string;
  readonly revision?: string;
  readonly synced: boolean;
  readonly counts: { readonly failed: number; readonly inDoubt: number; readonly blocked: number };
  readonly unhealthy?: readonly string[];
  /** Why those checks failed, one line each (the check, expected against got, the answer's excerpt). */
  readonly checkFailures?: readonly string[];
  readonly error?: string;
}

/** Outcomes that say nothing of the revision: the source could not be read, another replica ran the environment, nothing was promoted yet, or it was held (frozen: nothing applied). */
const neutral = new Set(["source-error", "standby", "waiting", "frozen"]);

/** A run's verdict on its revision. */
export function verdictOf(run: RunOutcome): Pick<RunFact, "verdict" | "problem"> {
  if (neutral.has(run.outcome)) return { verdict: "neutral" };
  const { failed, inDoubt, blocked } = run.counts;
  const unhealthy = run.unhealthy ?? [];
  if (unhealthy.length > 0) {
    const why = run.checkFailures ?? [];
    return { verdict: "failed", problem: `post-apply check failed: ${why.length > 0 ? why.join("; ") : unhealthy.join(", ")}` };
  }
  if (failed + inDoubt + blocked > 0) return { verdict: "failed", problem: `${failed} failed, ${inDoubt} in doubt, ${blocked} blocked` };
  if (run.outcome === "invalid") return { verdict: "failed", problem: "the revision does not validate" };
  if ((run.outcome === "applied" || run.outcome === "noop") && run.synced) return { verdict: "ok" };
  return { verdict: "failed", problem: run.error ?? `the run ended ${run.outcome}` };
}

/** A verification row as the rules read it: a grant, or (`withdrawn`) the withdrawal of one. */
export interface VerificationFact {
  readonly revision: string;
  /** When it was written (ms since the epoch). */
  readonly at: number;
  /** Why it was withdrawn: set on a withdrawal row. */
  readonly withdrawn?: string;
}

/** Each revision's newest row (rows newest first): the one that decides whether its verification stands. */
function newestOfEach(rows: readonly VerificationFact[]): VerificationFact[] {
  const decided = new Set<string>();
  return rows.filter((row) => !decided.has(row.revision) && decided.add(row.revision));
}

/**
 * The verifications that stand (rows newest first): per revision, its newest row decides — a
 * grant stands, a withdrawal takes it back until a later grant. Newest first.
 */
export function standingOf(rows: readonly VerificationFact[]): VerificationFact[] {
  return newestOfEach(rows).filter((row) => row.withdrawn === undefined);
}

/** The withdrawals in force (rows newest first): per revision, its newest row when it is one. */
export function withdrawalsOf(rows: readonly VerificationFact[]): VerificationFact[] {
  return newestOfEach(rows).filter((row) => row.withdrawn !== undefined);
}

/**
 * Verification is a state, not an event: the newest telling run (runs newest first) failed, after
 * its revision was verified, and that verification stands — it is withdrawn, with the run's
 * problem. Undefined: nothing to withdraw.
 */
export function withdrawalDue(runs: readonly RunFact[], rows: readonly VerificationFact[]): { revision: string; reason: string } | undefined {
  const newest = runs.find((r) => r.verdict !== "neutral");
  if (newest?.verdict !== "failed" || newest.revision === undefined) return undefined;
  const granted = standingOf(rows).find((v) => v.revision === newest.revision);
  if (granted === undefined || newest.lastAt < granted.at) return undefined;
  return { revision: newest.revision, reason: newest.problem ?? "a later run failed" };
}
