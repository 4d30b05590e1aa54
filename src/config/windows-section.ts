/**
 * An environment's sync windows (docs/user/promotion.md#freezes-and-windows), the operator's
 * `environments.NAME.windows`: each `{ kind: allow | deny, schedule: CRON, duration, timeZone }`
 * opens at every time the cron schedule names (in its time zone, UTC by default) for `duration`.
 * As in Argo CD's sync windows: inside any deny window, or — when there are allow windows —
 * outside every one of them, the environment plans but applies and promotes nothing. The
 * schedules are read by croner; one it cannot read is refused when gatesync.yaml loads, at its line.
 */
import { Cron } from "croner";
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { formatPath } from "../text/field-path.js";
import type { PathSegment } from "../text/field-path.js";
import { parseDuration } from "./duration.js";

export interface SyncWindow {
  readonly kind: "allow" | "deny";
  /** A cron expression (five fields, or six with seconds). */
  readonly schedule: string;
  readonly durationMs: number;
  /** An IANA time zone (`Europe/Berlin`); default UTC. */
  readonly timeZone: string;
}

type Raw = Record<string, unknown>;

/** `windows:` of one environment as the schema let it through. */
export function windowsFromDocument(raw: unknown): SyncWindow[] {
  if (!Array.isArray(raw)) return [];
  return raw.map((w: Raw) => ({
    kind: w.kind === "deny" ? "deny" : "allow",
    schedule: String(w.schedule),
    durationMs: parseDuration(String(w.duration)),
    timeZone: typeof w.timeZone === "string" ? w.timeZone : "UTC",
  }));
}

/** A cron reader for the window (never scheduling anything: no function is given). */
export const cronOf = (w: Pick<SyncWindow, "schedule" | "timeZone">): Cron => new Cron(w.schedule, { timezone: w.timeZone, paused: true });

/** What croner or the time zone says is wrong with each window, at the setting. */
export function windowProblems(environments: Raw, file: string, locate: (p: readonly PathSegment[]) => { line?: number; column?: number }): Diagnostic[] {
  const problems: Diagnostic[] = [];
  for (const [name, value] of Object.entries(environments)) {
    const list = ((value ?? {}) as Raw).windows;
    if (!Array.isArray(list)) continue;
    list.forEach((w: Raw, i) => {
      const at = (key: string): PathSegment[] => ["environments", name, "windows", i, key];
      const problem = (p: PathSegment[], message: string, hint: string): void => {
        problems.push({ severity: "error", code: ErrorCode.CONFIG_INVALID, file, path: formatPath(p), ...locate(p), message, hint });
      };
      const timeZone = typeof w.timeZone === "string" ? w.timeZone : "UTC";
      try {
        new Intl.DateTimeFormat("en", { timeZone });
      } catch {
        problem(at("timeZone"), `unknown time zone ${JSON.stringify(timeZone)}`, "an IANA time zone such as UTC or Europe/Berlin");
        return;
      }
      try {
        if (cronOf({ schedule: String(w.schedule), timeZone }).nextRun() === null) throw new Error("it never runs");
      } catch (err) {
        problem(
          at("schedule"),
          `bad cron schedule ${JSON.stringify(w.schedule)}: ${(err as Error).message}`,
          'five fields, e.g. "0 22 * * 1-5" (22:00 on weekdays)',
        );
      }
    });
  }
  return problems;
}

/** A window open at `now`: when its current opening ends. */
function openUntil(w: SyncWindow, now: number): number | undefined {
  // the newest start at or before now (croner answers starts strictly before its reference, to the second)
  const start = cronOf(w).previousRuns(1, new Date(now + 1000))[0];
  if (start === undefined || start.getTime() > now) return undefined;
  const end = start.getTime() + w.durationMs;
  return end > now ? end : undefined;
}

/** What the windows say at `now`: closed by which (undefined: open), and when that may change. */
export interface WindowVerdict {
  readonly closedBy?: SyncWindow;
  /** The next time a window opens or closes (ms since the epoch): the daemon looks again then. */
  readonly changesAt?: number;
}

export function windowVerdict(windows: readonly SyncWindow[], now: number): WindowVerdict {
  if (windows.length === 0) return {};
  let changesAt: number | undefined;
  const soonest = (t: number | undefined): void => {
    if (t !== undefined && (changesAt === undefined || t < changesAt)) changesAt = t;
  };
  let deny: SyncWindow | undefined;
  let allowOpen = false;
  for (const w of windows) {
    const end = openUntil(w, now);
    soonest(end ?? cronOf(w).nextRun(new Date(now))?.getTime());
    if (end !== undefined && w.kind === "deny") deny ??= w;
    if (end !== undefined && w.kind === "allow") allowOpen = true;
  }
  const allows = windows.filter((w) => w.kind === "allow");
  const closedBy = deny ?? (allows.length > 0 && !allowOpen ? allows[0] : undefined);
  return { ...(closedBy === undefined ? {} : { closedBy }), ...(changesAt === undefined ? {} : { changesAt }) };
}
