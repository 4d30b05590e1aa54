/**
 * How a revision moves between environments (docs/user/promotion.md), the operator's settings of
 * `environments.NAME` beside `track:` (track-section.ts): `soak`, how long a revision must run
 * healthy here before it is verified, and `promotion`, whether a verified candidate of the
 * environment it is promoted from is promoted by the daemon itself (`auto`) or waits for
 * `gatesync promote` (`manual`, the default). The chain's rules — the source exists, no cycle —
 * are checked when gatesync.yaml loads.
 */
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { formatPath } from "../text/field-path.js";
import type { PathSegment } from "../text/field-path.js";
import { parseDuration } from "./duration.js";
import { trackFromDocument } from "./track-section.js";
import type { TrackSetting } from "./track-section.js";

export interface PromotionSettings {
  /** How long a revision runs healthy here before it is verified (0: at its first healthy run). */
  readonly soakMs: number;
  /** Whether a verified candidate of `promotedFrom` is promoted by the daemon itself. */
  readonly mode: "auto" | "manual";
}

type Raw = Record<string, unknown>;

/** `soak:` and `promotion:` of one environment as the schema let them through. */
export function promotionFromDocument(e: Raw): PromotionSettings {
  return { soakMs: typeof e.soak === "string" ? parseDuration(e.soak) : 0, mode: e.promotion === "auto" ? "auto" : "manual" };
}

/** The environment a promoted one takes its revisions from. */
export const promotedFromOf = (track: TrackSetting | undefined): string | undefined =>
  track !== undefined && "promotedFrom" in track ? track.promotedFrom : undefined;

/**
 * The chain's rules: `promotedFrom` names another environment of the file, and following the
 * sources from any environment ends (no cycle). Each finding at the setting that breaks the rule.
 */
export function promotionChainProblems(
  environments: Raw,
  file: string,
  locate: (p: readonly PathSegment[]) => { line?: number; column?: number },
): Diagnostic[] {
  const problems: Diagnostic[] = [];
  const sourceOf = new Map<string, string>();
  for (const [name, value] of Object.entries(environments)) {
    const from = promotedFromOf(trackFromDocument(((value ?? {}) as Raw).track));
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
  for (const name of sourceOf.keys()) cycleFrom(name, sourceOf, problem);
  return problems;
}

/** Follows the sources from `name`; a return to it is a cycle, said at `name`. */
function cycleFrom(name: string, sourceOf: ReadonlyMap<string, string>, problem: (name: string, message: string, hint: string) => void): void {
  const seen = [name];
  for (let at = sourceOf.get(name); at !== undefined; at = sourceOf.get(at)) {
    if (at === name) {
      problem(name, `environments promoted from each other in a cycle: ${[...seen, name].join(" → ")}`, "one environment of the chain must follow the branch");
      return;
    }
    if (seen.includes(at)) return;
    seen.push(at);
  }
}
