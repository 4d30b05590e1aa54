/**
 * The commit a ref names, with its author and subject as `git log -1 --format=%an%x00%s` prints
 * them, read from the clone's own files when git left both loose: a fetch of a push writes the
 * ref as a file and, under git's `fetch.unpackLimit` (100 objects), the commit as a loose object
 * (gitrepository-layout(5), gitformat-loose(5)). It spares a webhook's run the `git log` process
 * (~5 ms: docs/dev/performance.md, "Push to applied"). Anything else — a packed ref or object, a
 * symbolic ref, an annotated tag, another encoding than UTF-8, an author line git would read
 * otherwise, a commit over 64 KiB — is left to git (undefined), so what is read here is always
 * what git would have said (test/source/loose-commit.test.ts compares the two on commits written
 * byte by byte).
 *
 * By hand: a library that reads git objects (isomorphic-git) is a whole git implementation for
 * the thirty lines of two stable formats used here.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { inflateSync } from "node:zlib";
import { commitText } from "./commit-text.js";
import type { CommitText } from "./commit-text.js";

/** Past this a commit is read by git (its message is the repository's text: bounded before it is inflated). */
const maxCommitBytes = 64 * 1024;

/** git's own `isspace` (sane-ctype.h): space, tab, newline, carriage return. */
const isGitSpace = (c: string | undefined): boolean => c === " " || c === "\t" || c === "\n" || c === "\r";

const trimEnd = (line: string): string => {
  let end = line.length;
  while (end > 0 && isGitSpace(line[end - 1])) end--;
  return line.slice(0, end);
};

/** `%an`: the author line's text before its first `<`, without the blanks before it (ident.c split_ident_line); none without `<…>`. */
function authorName(line: string): string | undefined {
  const mail = line.indexOf("<");
  return mail < 0 || line.indexOf(">", mail) < 0 ? undefined : trimEnd(line.slice(0, mail));
}

/** `%s`: the message's first paragraph past any blank lines, its lines joined by a space (pretty.c format_subject). */
function subjectOf(message: string): string {
  const lines = message.split("\n");
  let i = 0;
  while (i < lines.length && trimEnd(lines[i]!) === "") i++;
  const kept: string[] = [];
  for (; i < lines.length && trimEnd(lines[i]!) !== ""; i++) kept.push(trimEnd(lines[i]!));
  return kept.join(" ");
}

/** The author and subject of a commit object's text (after its `commit <size>\0` header); undefined where git might read it otherwise. */
export function commitFields(body: string): { readonly author: string; readonly subject: string } | undefined {
  const end = body.indexOf("\n\n");
  const headers = (end < 0 ? body : body.slice(0, end)).split("\n");
  const authors = headers.filter((h) => h.startsWith("author "));
  // git reads the last of several (pretty.c parse_commit_header): a commit written so is left to it
  if (authors.length !== 1 || headers.some((h) => h.startsWith("encoding ") && !/^encoding utf-?8$/i.test(h))) return undefined;
  const author = authorName(authors[0]!.slice("author ".length));
  if (author === undefined) return undefined;
  return { author, subject: end < 0 ? "" : subjectOf(body.slice(end + 2)) };
}

/** The loose object `id`'s commit text, when it is a loose commit of at most maxCommitBytes. */
function looseCommitBody(gitDir: string, id: string): string | undefined {
  const raw = inflateSync(readFileSync(path.join(gitDir, "objects", id.slice(0, 2), id.slice(2))), { maxOutputLength: maxCommitBytes + 32 });
  const nul = raw.indexOf(0);
  const header = raw.subarray(0, nul).toString("latin1");
  const size = /^commit (\d+)$/.exec(header);
  if (size === null || Number(size[1]) !== raw.length - nul - 1) return undefined;
  const body = raw.subarray(nul + 1);
  const text = body.toString("utf8");
  // bytes that are not UTF-8 (git prints them as they are, a string here would not), or a NUL (where git's reading stops)
  return Buffer.byteLength(text) === body.length && !text.includes("\uFFFD") && !text.includes("\0") ? text : undefined;
}

/**
 * The commit `ref` (`refs/remotes/origin/main`) names in the clone's `gitDir`, its author and
 * subject bounded as commitText bounds git's; undefined when git must be asked. Synchronous:
 * two small files, where two thread-pool round trips would cost more than the reads.
 */
export function looseCommit(gitDir: string, ref: string): { readonly commit: string; readonly told: CommitText } | undefined {
  try {
    const commit = readFileSync(path.join(gitDir, ref), "utf8").trim();
    if (!/^(?:[0-9a-f]{40}|[0-9a-f]{64})$/.test(commit)) return undefined;
    const body = looseCommitBody(gitDir, commit);
    const fields = body === undefined ? undefined : commitFields(body);
    return fields === undefined ? undefined : { commit, told: commitText(`${fields.author}\0${fields.subject}`) };
  } catch {
    // packed, missing, too large, not zlib: git knows
    return undefined;
  }
}
