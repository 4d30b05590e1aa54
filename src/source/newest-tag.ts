/**
 * `track: { tag: PATTERN }` (docs/user/environments.md): the newest tag of the repository whose
 * name matches a glob. Tag names are the repository's (anyone who can push writes them): how
 * many are read and how long each may be are bounded, the glob is matched by the linear-time
 * engine (linear-regex.ts), and a name is never handed to git — the object it names is: the
 * matching tags are listed with `ls-remote`, their objects fetched by id into refs of
 * gatesync's own naming (`refs/gatesync/tags/INDEX`), and no other tag is fetched (a tag named
 * too long for the file system would fail any fetch that takes it).
 */
import { ErrorCode, SourceError } from "../errors.js";
import { linearTest } from "../linear-regex.js";
import { gitOutput } from "./quiet-git.js";
import type { QuietGitOptions } from "./quiet-git.js";

/** Tags read at most: a repository holding more is refused, said, rather than read in part (the newest might be left out). */
export const maxTags = 20_000;
/** Characters of a tag name considered; a longer name is passed over (no release is named so). */
export const maxTagNameChars = 200;
/** What a listing of tags (`ls-remote`, `for-each-ref`) may print: maxTags lines of a bounded name, two object names and a date. */
const maxListingBytes = maxTags * (maxTagNameChars + 2 * 64 + 32);

/** A tag that points (directly or through an annotated tag) at a commit. */
export interface TagRef {
  readonly name: string;
  readonly commit: string;
  /** The tagged commit's committer date, in seconds. */
  readonly date: number;
}

/** `*` any characters (`/` too), `?` one; everything else literal; the whole name must match. */
export function globMatcher(pattern: string): (name: string) => boolean {
  const source = [...pattern].map((c) => (c === "*" ? ".*" : c === "?" ? "." : c.replace(/[\\^$.|+()[\]{}]/g, "\\$&"))).join("");
  const test = linearTest(`^(?:${source})$`);
  return (name) => test(name);
}

/** Numbers of a semantic version compared as decimal strings: no overflow on a crafted `1.99999999999999999999.0`. */
const compareNumbers = (a: string, b: string): number => (a.length !== b.length ? a.length - b.length : a < b ? -1 : a > b ? 1 : 0);

interface Version {
  readonly core: readonly [string, string, string];
  readonly pre: readonly string[];
}

const versionPattern = /^v?(0|[1-9]\d{0,40})\.(0|[1-9]\d{0,40})\.(0|[1-9]\d{0,40})(?:-([0-9A-Za-z.-]{1,100}))?(?:\+[0-9A-Za-z.-]{1,100})?$/;

/** The version a tag names, after the pattern's literal prefix (`release-*` over `release-1.2.3`), a `v` allowed. */
export function versionOf(name: string, prefix: string): Version | undefined {
  if (!name.startsWith(prefix)) return undefined;
  const m = versionPattern.exec(name.slice(prefix.length));
  if (m === null) return undefined;
  return { core: [m[1]!, m[2]!, m[3]!], pre: m[4] === undefined ? [] : m[4].split(".") };
}

/** Semantic version precedence (semver.org §11): cores by number, then a prerelease below its release, identifiers one by one. */
export function compareVersions(a: Version, b: Version): number {
  for (let i = 0; i < 3; i++) {
    const c = compareNumbers(a.core[i]!, b.core[i]!);
    if (c !== 0) return c;
  }
  if (a.pre.length === 0 || b.pre.length === 0) return b.pre.length - a.pre.length;
  for (let i = 0; i < Math.min(a.pre.length, b.pre.length); i++) {
    const x = a.pre[i]!;
    const y = b.pre[i]!;
    const xn = /^\d+$/.test(x);
    const yn = /^\d+$/.test(y);
    const c = xn && yn ? compareNumbers(x, y) : xn ? -1 : yn ? 1 : x < y ? -1 : x > y ? 1 : 0;
    if (c !== 0) return c;
  }
  return a.pre.length - b.pre.length;
}

/**
 * The newest of the tags matching `pattern`: by semantic version when any matching name is one —
 * the names that are not are passed over (`skipped`: one stray tag must not switch a release
 * track to commit-date order) — else by the tagged commit's date (then by name, so the choice
 * never depends on the order git listed them in). No tag when none matches.
 */
export function newestTagOf(tags: readonly TagRef[], pattern: string): { readonly tag?: TagRef; readonly skipped: readonly string[] } {
  const matches = globMatcher(pattern);
  const matching = tags.filter((t) => t.name.length <= maxTagNameChars && matches(t.name));
  if (matching.length === 0) return { skipped: [] };
  const prefix = pattern.split(/[*?]/)[0]!;
  const byName = (a: TagRef, b: TagRef): number => (a.name < b.name ? -1 : a.name > b.name ? 1 : 0);
  const versioned: Array<{ t: TagRef; v: Version }> = [];
  const skipped = new Set<string>();
  for (const t of matching) {
    const v = versionOf(t.name, prefix);
    if (v === undefined) skipped.add(t.name);
    else versioned.push({ t, v });
  }
  if (versioned.length > 0) {
    const ordered = versioned.sort((a, b) => compareVersions(a.v, b.v) || a.t.date - b.t.date || byName(a.t, b.t));
    return { tag: ordered[ordered.length - 1]!.t, skipped: [...skipped].sort() };
  }
  return { tag: [...matching].sort((a, b) => a.date - b.date || byName(a, b))[matching.length - 1]!, skipped: [] };
}

/** The newest tag matching `pattern` (newestTagOf), or undefined when none matches. */
export const newestTag = (tags: readonly TagRef[], pattern: string): TagRef | undefined => newestTagOf(tags, pattern).tag;

const hex = /^[0-9a-f]{40}([0-9a-f]{24})?$/;

/** Parses `for-each-ref`'s lines (name, object, peeled object, dates, types; NUL-separated): tags of commits only, named below `namespace`. */
export function parseTagListing(out: string, namespace = "refs/tags/"): TagRef[] {
  // (at most maxTags lines: fetchMatchingTags writes no more indices than that)
  const lines = out.split("\n").filter((l) => l !== "");
  const tags: TagRef[] = [];
  for (const line of lines) {
    const [ref, object, peeled, type, peeledType, date, peeledDate] = line.split("\0");
    const annotated = peeled !== undefined && peeled !== "";
    const commit = annotated ? peeled : object;
    if (ref === undefined || commit === undefined || !hex.test(commit) || (annotated ? peeledType : type) !== "commit") continue;
    tags.push({ name: ref.startsWith(namespace) ? ref.slice(namespace.length) : ref, commit, date: Number(annotated ? peeledDate : date) || 0 });
  }
  return tags;
}

/** More tags match than are read (`count`), or the remote's listing of its tags is longer than is read (no count). */
const tooManyTags = (pattern: string, count: number | undefined): SourceError =>
  new SourceError(
    ErrorCode.SOURCE_INVALID,
    count === undefined
      ? `the repository's tags are more than gatesync reads (a listing of ${maxListingBytes} bytes)`
      : `${count} tags of the repository match \`${pattern}\`, more than the ${maxTags} gatesync reads`,
    { hint: `a tag-tracking environment reads at most ${maxTags} matching tags: delete old tags from the remote, narrow the pattern, or follow a branch` },
  );

/** Where the matching tags' objects are fetched to, by their index in the remote's listing. */
const fetchedTags = "refs/gatesync/tags/";

/** The remote's tags whose names match `pattern` (at most `maxTagNameChars` each), with the object each names, as `ls-remote` lists them. */
async function matchingRemoteTags(pattern: string, opts: QuietGitOptions): Promise<Array<{ readonly name: string; readonly object: string }>> {
  const out = await gitOutput(["ls-remote", "--tags", "--refs", "origin"], {
    ...opts,
    maxBytes: maxListingBytes,
    tooLong: () => tooManyTags(pattern, undefined),
  });
  const matches = globMatcher(pattern);
  const tags: Array<{ name: string; object: string }> = [];
  for (const line of out.split("\n")) {
    const tab = line.indexOf("\t");
    const object = line.slice(0, tab);
    const name = line.slice(tab + 1).replace(/^refs\/tags\//, "");
    if (tab > 0 && hex.test(object) && name.length <= maxTagNameChars && matches(name)) tags.push({ name, object });
  }
  if (tags.length > maxTags) throw tooManyTags(pattern, tags.length);
  return tags;
}

/**
 * The remote's tags matching `pattern` that name commits, with their dates: their objects
 * fetched by id (refspecs of object ids on git's standard input), read back by index.
 */
export async function fetchMatchingTags(pattern: string, opts: QuietGitOptions): Promise<TagRef[]> {
  const remote = await matchingRemoteTags(pattern, opts);
  if (remote.length === 0) return [];
  const refspecs = remote.map((t, i) => `+${t.object}:${fetchedTags}${i}\n`).join("");
  await gitOutput(["fetch", "--stdin", "--force", "--no-tags", "--quiet", "origin"], { ...opts, input: refspecs });
  const format = "%(refname)%00%(objectname)%00%(*objectname)%00%(objecttype)%00%(*objecttype)%00%(committerdate:unix)%00%(*committerdate:unix)";
  const out = await gitOutput(["for-each-ref", `--format=${format}`, fetchedTags], {
    ...opts,
    maxBytes: maxListingBytes,
    tooLong: () => tooManyTags(pattern, undefined),
  });
  // every index of this listing was just written (forced); one past it is an earlier listing's, left behind
  return parseTagListing(out, fetchedTags).flatMap((t) => {
    const tag = /^\d+$/.test(t.name) ? remote[Number(t.name)] : undefined;
    return tag === undefined ? [] : [{ ...t, name: tag.name }];
  });
}
