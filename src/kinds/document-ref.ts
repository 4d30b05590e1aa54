/**
 * An attached document (an ApiDefinition's OpenAPI file) held by reference after validation:
 * its members' canonical texts (small, or a digest for big ones like `paths`), its small
 * members themselves, and the way to read it again. A repository of 10,000 APIs then keeps
 * kilobytes per API instead of every parsed document; the whole document is read again where
 * it is needed (the request sent, a changed definition's diff) and dropped after.
 *
 * Reading it again checks the content against the digest taken at validation: a file changed
 * in between is an error, never a document sent unvalidated.
 */
import type { Deferred } from "../deferred.js";
import { descend, rewrite } from "../text/rewrite.js";
import { ErrorCode, InternalError, SourceError } from "../errors.js";
import { canonicalDigest, canonicalMembers, canonicalObject } from "./canonical.js";
import type { HasCanonicalDigest } from "./canonical.js";
import { sensitiveKey } from "../secrets/markers.js";

/** What the thread that parsed the document keeps of it (plain data: crosses threads). */
export interface DocumentSummary {
  /** Canonical text of each top-level member (a `#digest` for a member over 2 KiB). */
  readonly parts: Readonly<Record<string, string>>;
  /** The members the document's kind reads without loading it (its `heldMembers`), as values. */
  readonly small: Readonly<Record<string, unknown>>;
  /** A digest of the text the document was parsed from, when known: the same text needs no member digests to be trusted. */
  readonly text?: string;
  /**
   * The validated document as `JSON.stringify(document, null, 2)` writes it, kept only for a run
   * that prints documents (a JSON plan) of a repository small enough (validation-run.ts,
   * `printedDocumentsBudget`): the plan's JSON splices this text in (render.ts) instead of reading
   * and parsing the file again, or parsing and writing the document again.
   */
  readonly json?: string;
}

/**
 * Summarises a parsed document (a mapping) for a reference: only the `held` members stay
 * values — the others' texts weigh a fifth of their trees, and nothing reads them unloaded.
 */
export function summarise(document: Readonly<Record<string, unknown>>, held: readonly string[], text?: string, json?: string): DocumentSummary {
  const parts = canonicalMembers(document);
  const small: Record<string, unknown> = {};
  for (const k of Object.keys(parts)) if (held.includes(k)) small[k] = document[k];
  return { parts, small, ...(text === undefined ? {} : { text }), ...(json === undefined ? {} : { json }) };
}

/**
 * The document's JSON text to keep for printing (DocumentSummary.json), written as the plan
 * writes it (indented by 2), unless it is over three times its file's size: YAML aliases can make
 * a small file a large document, and the budget that allows keeping the texts is counted in file
 * bytes. Nor is it kept for a document holding a `$sensitive` key, which a plan writes as a
 * sensitive marker (rare: it is then read again to print, as before).
 */
export function printableJson(document: unknown, fileChars: number): string | undefined {
  const json = JSON.stringify(document, null, 2);
  return json.length <= 3 * fileChars + 1024 && !json.includes(`"${sensitiveKey}"`) ? json : undefined;
}

/** Where a referenced document lives, and how to read it again. */
export interface DocumentSource {
  /** Path relative to the repository root, as findings name it. */
  readonly file: string;
  /** Reads and parses the document again (throws when it can no longer be read). */
  readonly read: () => unknown;
  /**
   * The document read again if its file's text still has this digest (DocumentSummary.text);
   * undefined otherwise. Parsing the same text gives the same document, so its members' digests
   * (a document's worth of canonical JSON, each time a plan or an apply reads it) are not taken.
   */
  readonly readIfUnchanged?: (text: string) => unknown;
}

function changed(file: string): SourceError {
  return new SourceError(ErrorCode.SOURCE_CHANGED, `${file} changed after it was validated`, {
    hint: "a file of the repository was changed while gatesync was running: nothing of it was sent; run again",
  });
}

/**
 * Own enumerable symbol property holding the digest: deep-equality checks (which compare own
 * enumerable symbols) then tell two references apart by content; JSON and key walks ignore it.
 */
const digestKey = Symbol("documentDigest");

/**
 * A deferred document (src/deferred.ts): `read()` reads and parses the file again and throws
 * SourceError SOURCE_CHANGED when it can no longer be read or its content changed.
 */
export class DocumentRef implements Deferred<Record<string, unknown>>, HasCanonicalDigest {
  readonly #source: DocumentSource;
  readonly #summary: DocumentSummary;
  /** Top-level members replaced (e.g. the gateway extension completed with the API's id). */
  readonly #overrides: Readonly<Record<string, unknown>>;
  readonly [digestKey]: string;

  constructor(source: DocumentSource, summary: DocumentSummary, overrides: Readonly<Record<string, unknown>> = {}) {
    this.#source = source;
    this.#summary = summary;
    this.#overrides = overrides;
    this[digestKey] = canonicalObject({ ...summary.parts, ...canonicalMembers(overrides) });
  }

  get file(): string {
    return this.#source.file;
  }

  /** A top-level member: held ones only (named as held, or replaced); `undefined` when absent. */
  member(key: string): unknown {
    if (Object.hasOwn(this.#overrides, key)) return this.#overrides[key];
    if (Object.hasOwn(this.#summary.small, key)) return this.#summary.small[key];
    if (Object.hasOwn(this.#summary.parts, key))
      throw new InternalError(`${this.#source.file}: member ${key} of a document held by reference was read without loading it`);
    return undefined;
  }

  /** The same document with one top-level member replaced. */
  with(key: string, value: object): DocumentRef {
    return new DocumentRef(this.#source, this.#summary, { ...this.#overrides, [key]: value });
  }

  [canonicalDigest](): string {
    return this[digestKey];
  }

  /** The whole document, read again; throws SourceError SOURCE_CHANGED when its content changed. */
  read(): Record<string, unknown> {
    const text = this.#summary.text;
    const same = text === undefined ? undefined : this.#source.readIfUnchanged?.(text);
    const value = same ?? this.#source.read();
    if (value === null || typeof value !== "object" || Array.isArray(value)) throw changed(this.#source.file);
    const read = value as Record<string, unknown>;
    // another text may still hold the same content (a comment added): its members decide
    if (same === undefined && canonicalObject(canonicalMembers(read)) !== canonicalObject(this.#summary.parts)) throw changed(this.#source.file);
    return Object.keys(this.#overrides).length === 0 ? read : { ...read, ...this.#overrides };
  }

  /**
   * The document's JSON as `JSON.stringify(document, null, 2)` writes it, when its validation
   * kept it and no member is replaced; undefined otherwise (then `toJSON` reads it).
   */
  printedJson(): string | undefined {
    return Object.keys(this.#overrides).length === 0 ? this.#summary.json : undefined;
  }

  /** Serialised, it is the document itself: the validated one when its JSON is kept, else read again. */
  toJSON(): unknown {
    const json = this.#summary.json;
    if (json === undefined) return this.read();
    const document = JSON.parse(json) as Record<string, unknown>;
    return Object.keys(this.#overrides).length === 0 ? document : { ...document, ...this.#overrides };
  }
}

export function isDocumentRef(value: unknown): value is DocumentRef {
  return value instanceof DocumentRef;
}

/**
 * The value with every document reference in it replaced by the document (copy-on-write:
 * parts without references are returned as they are).
 */
export function materialize<T>(value: T): T {
  return rewrite(value, (v) => (v instanceof DocumentRef ? v.read() : v !== null && typeof v === "object" ? descend : v)) as T;
}

/** A top-level member of a document held in memory or by reference. */
export function documentMember(document: unknown, key: string): unknown {
  if (document instanceof DocumentRef) return document.member(key);
  return document !== null && typeof document === "object" && !Array.isArray(document) ? (document as Record<string, unknown>)[key] : undefined;
}

/** The document with one top-level member replaced, whether held in memory or by reference. */
export function withMember(document: object, key: string, value: object): object {
  return document instanceof DocumentRef ? document.with(key, value) : { ...document, [key]: value };
}
