/**
 * `track:` of an environment in gatesync.yaml (docs/user/environments.md), the operator's: what
 * the environment applies — the head of a branch (`{ branch: NAME }`, the default: the top
 * level's `source.git`), the newest tag matching a glob (`{ tag: PATTERN }`), or only what
 * another environment applied and verified (`{ promotedFrom: ENV }`, daemon/promotion).
 */
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { formatPath } from "../text/field-path.js";
import type { PathSegment } from "../text/field-path.js";

type Raw = Record<string, unknown>;

/** The part of `source:` that says which ref the top level follows (config.ts's SourceConfig). */
export interface GitRefSetting {
  readonly type: "git" | "directory";
  readonly branch?: string;
  readonly tag?: string;
  readonly commit?: string;
}

/** What an environment applies, as written (the schema checked the shape: one key, a bounded name). */
export type TrackSetting = { readonly branch: string } | { readonly tag: string } | { readonly promotedFrom: string };

/** What a merge request's commit meets in an environment: its track, or the top level's ref when it sets none. */
export type FollowedRef = TrackSetting | { readonly defaultBranch: true } | { readonly commit: string };

/** `track:` after the schema; absent (or not one of the three shapes): undefined, the top level's ref. */
export function trackFromDocument(raw: unknown): TrackSetting | undefined {
  if (raw === null || typeof raw !== "object") return undefined;
  const t = raw as Record<string, unknown>;
  if (typeof t.branch === "string") return { branch: t.branch };
  if (typeof t.tag === "string") return { tag: t.tag };
  if (typeof t.promotedFrom === "string") return { promotedFrom: t.promotedFrom };
  return undefined;
}

/** What the environment follows: its own track, else the top level's git ref; undefined for a directory source. */
export function followedRef(source: GitRefSetting, track: TrackSetting | undefined): FollowedRef | undefined {
  if (source.type !== "git") return undefined;
  if (track !== undefined) return track;
  if (source.commit !== undefined) return { commit: source.commit };
  // a tag name holds no glob character (git refuses `*` and `?` in a ref): it is the pattern of itself
  if (source.tag !== undefined) return { tag: source.tag };
  return source.branch !== undefined ? { branch: source.branch } : { defaultBranch: true };
}

/**
 * The key environments that fetch the same ref share a source by (`undefined`: the top level's,
 * also when the track names the very branch the top level follows: one fetch, one cache).
 */
export function trackKey(track: TrackSetting | undefined, source?: GitRefSetting): string | undefined {
  if (track === undefined || "promotedFrom" in track) return undefined;
  if ("branch" in track && source?.commit === undefined && source?.tag === undefined && source?.branch === track.branch) return undefined;
  return "branch" in track ? `branch:${track.branch}` : `tag:${track.tag}`;
}

/** What the schema cannot say of `track:`: only a git source has branches and tags to follow. */
export function trackProblems(doc: Raw, file: string, locate: (p: readonly PathSegment[]) => { line?: number; column?: number }): Diagnostic[] {
  const environments = doc.environments !== null && typeof doc.environments === "object" ? (doc.environments as Raw) : {};
  const git = doc.source !== null && typeof doc.source === "object" && "git" in (doc.source as Raw);
  if (git) return [];
  return Object.entries(environments)
    .filter(([, e]) => e !== null && typeof e === "object" && (e as Raw).track !== undefined)
    .map(([name]) => {
      const at: PathSegment[] = ["environments", name, "track"];
      return {
        severity: "error" as const,
        code: ErrorCode.CONFIG_INVALID,
        file,
        path: formatPath(at),
        ...locate(at),
        message: `environment ${name} sets \`track\`, but the source is a directory`,
        hint: "`track:` picks a branch or a tag of a git source (`source.git`); a directory has neither: remove it",
      };
    });
}

/** A branch, tag, pattern or environment name as an answer may carry it (the daemon's `GET /config`): bounded, no control character. */
const answerName = (v: unknown, max = 200): v is string => typeof v === "string" && v.length > 0 && v.length <= max && /^[A-Za-z0-9._/*?+-]+$/.test(v);

/** What `GET /config` says an environment follows, checked as any answer is; undefined when it says nothing gatesync knows. */
export function followedRefFrom(raw: unknown): FollowedRef | undefined {
  if (raw === null || typeof raw !== "object") return undefined;
  const f = raw as Raw;
  if (answerName(f.branch)) return { branch: f.branch };
  if (answerName(f.tag)) return { tag: f.tag };
  if (answerName(f.promotedFrom, 40)) return { promotedFrom: f.promotedFrom };
  if (f.defaultBranch === true) return { defaultBranch: true };
  if (typeof f.commit === "string" && /^[0-9a-f]{7,64}$/.test(f.commit)) return { commit: f.commit };
  return undefined;
}
