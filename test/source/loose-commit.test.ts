/**
 * After a fetch, a git source reads the followed commit, its author and subject from the files
 * git wrote (src/source/loose-commit.ts) instead of asking `git log`. A model test against git
 * itself: commit objects written byte by byte — odd author names, blank and indented lines,
 * several paragraphs, carriage returns, signatures, two authors, other encodings — each read both
 * ways; where the files are read at all, they say what `git log` says. And what the files cannot
 * say (a packed ref or object, an annotated tag, a huge commit) is left to git.
 */
import { execFileSync } from "node:child_process";
import { chmodSync, writeFileSync } from "node:fs";
import path from "node:path";
import fc from "fast-check";
import { afterAll, beforeAll, describe, expect, it } from "vitest";
import { commitText } from "../../src/source/commit-text.js";
import { looseCommit } from "../../src/source/loose-commit.js";
import { removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

afterAll(removeTempRepos);

const emptyTree = "4b825dc642cb6eb9a060e54bf8d69288fbee4904";
const ref = "refs/remotes/origin/main";
let repo = "";

const git = (args: readonly string[], input?: string): string =>
  execFileSync("git", args, { cwd: repo, encoding: "utf8", ...(input === undefined ? {} : { input }), stdio: ["pipe", "pipe", "pipe"] });

/** Writes `body` as a loose commit object and points the followed ref at it. */
function written(body: string): string {
  const id = git(["hash-object", "-t", "commit", "-w", "--literally", "--stdin"], body).trim();
  git(["update-ref", ref, id]);
  return id;
}

/** What `git log` says of the ref, as the source keeps it. */
function fromGit(): { commit: string; told: ReturnType<typeof commitText> } {
  const out = git(["log", "-1", "--no-show-signature", "--format=%H%x00%an%x00%s", `${ref}^{commit}`, "--"]);
  const nul = out.indexOf("\0");
  return { commit: out.slice(0, nul), told: commitText(out.slice(nul + 1)) };
}

const piece = fc.constantFrom("Ada", "Lovelace", "Zoë", "李", " ", "  ", "\t", ".", "o'Neil", "\u0007", "");
const name = fc.array(piece, { maxLength: 5 }).map((p) => p.join(""));
const line = fc.constantFrom("", " ", "\t", "subject", "  indented", "trailing  ", "with\r", "second line", "Zoë's fix", "x".repeat(300));
const message = fc.array(line, { maxLength: 8 }).map((l) => l.join("\n"));
const extraHeader = fc.oneof(
  { weight: 6, arbitrary: fc.constant("") },
  fc.constantFrom(
    "encoding UTF-8\n",
    "encoding ISO-8859-1\n",
    "gpgsig -----BEGIN PGP SIGNATURE-----\n \n author Eve <e@x> 1 +0000\n -----END PGP SIGNATURE-----\n",
    "author Second <s@x> 1700000001 +0000\n",
  ),
);
const mail = fc.oneof({ weight: 8, arbitrary: fc.constant("<a@example.com>") }, fc.constantFrom("<a@example.com", "a@example.com"));
const commitBody = fc
  .record({ name, message, extra: extraHeader, newlineAtEnd: fc.boolean(), bracket: mail })
  .map(
    ({ name, message, extra, newlineAtEnd, bracket }) =>
      `tree ${emptyTree}\nauthor ${name} ${bracket} 1700000000 +0000\ncommitter C <c@example.com> 1700000000 +0000\n${extra}\n${message}${newlineAtEnd ? "\n" : ""}`,
  );

beforeAll(async () => {
  repo = await tempRepo();
  execFileSync("git", ["init", "-q", repo]);
});

describe("the fetched commit read from git's files", () => {
  it("says what git log says, wherever it reads a commit at all", () => {
    let read = 0;
    fc.assert(
      fc.property(commitBody, (body) => {
        const id = written(body);
        const loose = looseCommit(path.join(repo, ".git"), ref);
        if (loose === undefined) return;
        read++;
        expect(loose).toEqual(fromGit());
        expect(loose.commit).toBe(id);
      }),
      { numRuns: 150 },
    );
    // most commits are read from the files: the way round git is taken, not always declined
    expect(read).toBeGreaterThan(60);
  });

  it("reads an ordinary commit, and leaves to git what it cannot read as git would", () => {
    const plain = `tree ${emptyTree}\nauthor Ada Lovelace <ada@example.com> 1700000000 +0000\ncommitter C <c@example.com> 1700000000 +0000\n\nfix: the audit timeout\n\nbody\n`;
    const id = written(plain);
    expect(looseCommit(path.join(repo, ".git"), ref)).toEqual({ commit: id, told: { author: "Ada Lovelace", subject: "fix: the audit timeout" } });
    // two authors (git reads the last), another encoding, no `<…>`, a NUL: git's
    for (const body of [
      plain.replace("committer", "author Eve <e@x> 1 +0000\ncommitter"),
      plain.replace("\n\nfix", "\nencoding ISO-8859-1\n\nfix"),
      plain.replace("<ada@example.com>", "ada@example.com"),
      plain.replace("body", "bo\0dy"),
      plain.replace("body", "b".repeat(70 * 1024)),
    ]) {
      written(body);
      expect(looseCommit(path.join(repo, ".git"), ref)).toBeUndefined();
    }
    // a packed ref, then a packed object: git's
    written(plain);
    git(["pack-refs", "--all"]);
    expect(looseCommit(path.join(repo, ".git"), ref)).toBeUndefined();
    expect(looseCommit(path.join(repo, ".git"), ref)?.commit ?? fromGit().commit).toBe(id);
    const next = written(`${plain}more\n`);
    expect(looseCommit(path.join(repo, ".git"), ref)?.commit).toBe(next);
    git(["repack", "-a", "-d", "-q"]);
    git(["prune-packed"]);
    expect(looseCommit(path.join(repo, ".git"), ref)).toBeUndefined();
    // a symbolic ref, a ref file of garbage, a loose object that is not zlib (a torn write): git's
    const loose = written(`${plain}once more\n`);
    writeFileSync(path.join(repo, ".git", ref), "ref: refs/heads/elsewhere\n");
    expect(looseCommit(path.join(repo, ".git"), ref)).toBeUndefined();
    writeFileSync(path.join(repo, ".git", ref), "\u0000not an id at all\n");
    expect(looseCommit(path.join(repo, ".git"), ref)).toBeUndefined();
    writeFileSync(path.join(repo, ".git", ref), `${loose}\n`);
    expect(looseCommit(path.join(repo, ".git"), ref)?.commit).toBe(loose);
    const object = path.join(repo, ".git/objects", loose.slice(0, 2), loose.slice(2));
    chmodSync(object, 0o644);
    writeFileSync(object, "torn");
    expect(looseCommit(path.join(repo, ".git"), ref)).toBeUndefined();
    // an annotated tag's ref names the tag object, not the commit: git's
    const tag = git(["mktag"], `object ${id}\ntype commit\ntag v1\ntagger T <t@x> 1700000000 +0000\n\nv1\n`).trim();
    git(["update-ref", ref, tag]);
    expect(looseCommit(path.join(repo, ".git"), ref)).toBeUndefined();
  });
});
