/**
 * Reading one resource file: size limit, bytes, UTF-8, YAML documents — every problem located.
 * Texts are not kept: positions of later findings are looked up by reading the file again
 * (`readTextSync`), on the error path only.
 */
import { createHash } from "node:crypto";
import { readFileSync } from "node:fs";
import { readFile } from "node:fs/promises";
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { defaultReadLimits } from "./parsed-yaml.js";
import { decodeText, parseYaml } from "./yaml-reader.js";
import type { ParsedFile } from "./yaml-reader.js";
import type { ParsedDocument } from "./parsed-yaml.js";

export interface Limits {
  readonly maxFileBytes: number;
  readonly maxFiles: number;
  readonly maxDepth: number;
  readonly maxAliasCount: number;
  /** Most YAML documents in one file, empty ones included (counted before they are all parsed). */
  readonly maxDocumentsPerFile: number;
  /** Most documents in the whole repository. */
  readonly maxDocuments: number;
}

export const defaultLimits: Limits = {
  maxFileBytes: 5 * 1024 * 1024,
  maxFiles: 50_000,
  maxDepth: defaultReadLimits.maxDepth,
  maxAliasCount: defaultReadLimits.maxAliasCount,
  maxDocumentsPerFile: defaultReadLimits.maxDocumentsPerFile,
  maxDocuments: 200_000,
};

/**
 * A file held in memory by its writer (`gatesync import` checks what it is about to write): its
 * text, as findings are located in it, and the documents it holds — the values the text was made
 * from, checked as they are instead of read and parsed again.
 */
export interface HeldFile {
  readonly text: string;
  readonly documents: readonly ParsedDocument[];
}

/** A file to read: its path relative to the root (as findings name it), absolute path and size; `held`: not read, its documents given. */
export interface FileToRead {
  readonly path: string;
  readonly absolute: string;
  readonly size: number;
  readonly held?: HeldFile;
}

export interface ReadFile extends ParsedFile {
  /** The decoded text, while the caller needs it to locate findings; undefined when unreadable. */
  readonly text: string | undefined;
  /** The digest of the bytes read (contentDigest): what was made of them serves the same bytes elsewhere (file-cache.ts). */
  readonly digest?: string;
}

/**
 * Reads and parses one file. Never throws: what goes wrong is a finding. `sync`: read without
 * the thread pool's round trip (a worker thread that does nothing else). `keepTrees`: with the
 * syntax trees (see parseYaml), for a caller that locates findings in the file while it checks it;
 * a function decides from the file's text, before it is parsed.
 */
export async function readResourceFile(
  file: FileToRead,
  limits: Limits,
  sync = false,
  keepTrees: boolean | ((text: string) => boolean) = false,
): Promise<ReadFile> {
  if (file.held !== undefined) return { documents: file.held.documents, diagnostics: [], text: file.held.text };
  const at = { severity: "error" as const, file: file.path };
  if (file.size > limits.maxFileBytes) {
    return fail({
      ...at,
      code: ErrorCode.FILE_TOO_LARGE,
      message: `file is ${file.size} bytes, over the limit of ${limits.maxFileBytes}`,
      hint: "split it into smaller files, or raise limits.maxFileBytes in gatesync.yaml",
    });
  }
  let bytes: Buffer;
  try {
    bytes = sync ? readFileSync(file.absolute) : await readFile(file.absolute);
  } catch (err) {
    return fail({
      ...at,
      code: ErrorCode.FILE_READ,
      message: `file cannot be read: ${(err as NodeJS.ErrnoException).code ?? String(err)}`,
      hint: "check its permissions",
    });
  }
  const digest = contentDigest(bytes);
  const decoded = decodeText(bytes, file.path);
  if ("diagnostic" in decoded) return { ...fail(decoded.diagnostic), digest };
  const parsed = parseYaml(decoded.text, file.path, limits, typeof keepTrees === "function" ? keepTrees(decoded.text) : keepTrees);
  return {
    documents: parsed.documents,
    diagnostics: parsed.diagnostics,
    text: decoded.text,
    digest,
    ...(parsed.trees === undefined ? {} : { trees: parsed.trees }),
  };
}

function fail(diagnostic: Diagnostic): ReadFile {
  return { documents: [], diagnostics: [diagnostic], text: undefined };
}

/** A digest of a file's bytes: tells the same content under another path or time (a commit's own checkout). */
export function contentDigest(bytes: Uint8Array): string {
  return createHash("sha1").update(bytes).digest("base64url");
}

/**
 * The digest of the bytes at `absolute` (contentDigest), or undefined when they cannot be read.
 * Synchronous: the file is hashed on this thread either way, and a file of a repository read
 * whole costs less than the thread-pool round trip of an asynchronous read; callers reading many
 * let the loop go between batches (kept-verdicts.ts).
 */
export function fileDigest(absolute: string): string | undefined {
  try {
    return contentDigest(readFileSync(absolute));
  } catch {
    return undefined;
  }
}

/** A file's text for locating a finding, or undefined when it can no longer be read as text. */
export function readTextSync(absolute: string, file: string): string | undefined {
  try {
    const decoded = decodeText(readFileSync(absolute), file);
    return "text" in decoded ? decoded.text : undefined;
  } catch {
    return undefined;
  }
}

/** A digest of a file's text: tells a document read again from the same text (DocumentSummary.text). */
export function textDigest(text: string): string {
  return createHash("sha256").update(text).digest("base64url");
}

/**
 * Document `index` of a file, read and parsed again (a document held by reference); undefined
 * when the file can no longer be read or parsed, or has no such document — or, given `digest`,
 * when its text no longer has that digest.
 */
export function readDocumentSync(absolute: string, file: string, index: number, digest?: string): unknown {
  const text = readTextSync(absolute, file);
  if (text === undefined || (digest !== undefined && textDigest(text) !== digest)) return undefined;
  const parsed = parseYaml(text, file);
  if (parsed.diagnostics.some((d) => d.severity === "error")) return undefined;
  return parsed.documents.find((d) => d.index === index)?.value;
}
