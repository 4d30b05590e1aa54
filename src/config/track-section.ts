/**
 * What an environment applies (docs/user/promotion.md), the operator's settings of
 * `environments.NAME`: `track` — the source's branch (the default: today's behaviour) or
 * `{ promotedFrom: ENV }`, only revisions ENV applied and verified — `soak`, how long a revision
 * must run healthy here before it is verified, and `promotion`, whether a verified candidate is
 * promoted by the daemon itself (`auto`) or waits for `gatesync promote` (`manual`, the default).
 * The chain's rules — the source exists, no cycle — are checked when gatesync.yaml loads.
 */
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { formatPath } from "../field-path.js";
import type { PathSegment } from "../field-path.js";
import { parseDuration } from "./duration.js";

export type Track = { readonly branch: string } | { readonly tag: string } | { readonly promotedFrom: string };

export interface TrackSettings {
  /** Absent: the source's branch. */
  readonly track?: Track;
  /** How long a revision runs healthy here before it is verified (0: at its first healthy run). */
  readonly soakMs: number;
  /** Whether a verified candidate of `promotedFrom` is promoted by the daemon itself. */
  readonly promotion: "auto" | "manual";
}

type Raw = Record<string, unknown>;

/** The settings of one environment as the schema let them through. */
export function trackFromDocument(e: Raw): TrackSettings {
  const t = e.track as Raw | undefined;
  const track: Track | undefined =
    typeof t?.promotedFrom === "string"
      ? { promotedFrom: t.promotedFrom }
      : typeof t?.tag === "string"
        ? { tag: t.tag }
        : typeof t?.branch === "string"
          ? { branch: t.branch }
          : undefined;
  return {
    ...(track === undefined ? {} : { track }),
    soakMs: typeof e.soak === "string" ? parseDuration(e.soak) : 0,
    promotion: e.promotion === "auto" ? "auto" : "manual",
  };
}

/** The environment a promoted one takes its revisions from. */
export const promotedFromOf = (settings: TrackSettings | undefined): string | undefined =>
  settings?.track !== undefined && "promotedFrom" in settings.track ? settings.track.promotedFrom : undefined;

/**
 * The chain's rules: `promotedFrom` names another environment of the file, and following the
 * sources from any environment ends (no cycle). Each finding at the setting that breaks the rule.
 */
export function trackProblems(environments: Raw, file: string, locate: (p: readonly PathSegment[]) => { line?: number; column?: number }): Diagnostic[] {
  const problems: Diagnostic[] = [];
  const sourceOf = new Map<string, string>();
  for (const [name, value] of Object.entries(environments)) {
    const from = promotedFromOf(trackFromDocument((value ?? {}) as Raw));
    if (from !== undefined) sourceOf.set(name, from);
  }
  const problem = (name: string, message: string, hint: string): void => {
    const p = ["environments", name, "track", "promotedFrom"];
    problems.push({ severity: "error", code: ErrorCode.CONFIG_INVALID, file, path: formatPath(p), ...locate(p), message, hint });
  };
  const names = Object.keys(environments);
  for (const [name, from] of sourceOf) {
    if (from === name) problem(name, `environment ${name} is promoted from itself`, "name the environment its revisions are verified in first");
    else if (!names.includes(from))
      problem(name, `environment ${name} is promoted from ${from}, which is not an environment`, `name one of: ${names.join(", ")}`);
  }
  if (problems.length > 0) return problems;
  for (const name of sourceOf.keys()) {
    const seen = [name];
    for (let at = sourceOf.get(name); at !== undefined; at = sourceOf.get(at)) {
      if (at === name) {
        problem(
          name,
          `environments promoted from each other in a cycle: ${[...seen, name].join(" → ")}`,
          "one environment of the chain must follow the branch",
        );
        break;
      }
      if (seen.includes(at)) break;
      seen.push(at);
    }
  }
  return problems;
}
