/**
 * Parses one file's bytes into documents, with every syntax problem located.
 *
 * YAML and JSON share one parser (JSON is YAML 1.2). Defences: duplicate keys are errors (found
 * in one pass: yaml-unique-keys.ts),
 * aliases are capped (alias bombs), nesting depth is capped (both during parsing, where a
 * stack overflow is caught, and after), bytes must be UTF-8 text without NUL.
 */
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import { parseFast } from "./fast-yaml.js";
import type { ParsedDocument, ReadLimits } from "./parsed-yaml.js";
import { defaultReadLimits } from "./parsed-yaml.js";
import { loadYamlLibrary } from "../yaml/yaml-library.js";
import type { Document, LineCounter, YamlLibrary, YamlNode } from "../yaml/yaml-library.js";
import { duplicateKeys } from "../yaml/yaml-unique-keys.js";

/**
 * `yaml`, loaded on first use: the value-only parse (fast-yaml.ts) answers for most files, so a
 * run whose files all pass it and have no finding to locate never loads it (~36 ms of a small
 * command's start). Required rather than imported: the parse is synchronous (yaml-library.ts).
 */
let library: YamlLibrary | undefined;
export const yaml = (): YamlLibrary => (library ??= loadYamlLibrary());

export interface ParsedFile {
  readonly documents: readonly ParsedDocument[];
  readonly diagnostics: readonly Diagnostic[];
  /** The syntax trees the values came from, when asked for (`keepTrees`): a Locator of the file uses them instead of parsing it again. */
  readonly trees?: SyntaxTrees;
}

/** A file's parsed documents with their positions: what a Locator looks findings up in. */
export interface SyntaxTrees {
  readonly docs: readonly Document.Parsed[];
  readonly lineCounter: LineCounter;
}

const utf8 = new TextDecoder("utf-8", { fatal: true });

/** Decodes bytes as UTF-8 text, or says why they are not text. */
export function decodeText(bytes: Uint8Array, file: string): { text: string } | { diagnostic: Diagnostic } {
  if (bytes.includes(0)) {
    return {
      diagnostic: {
        severity: "error",
        code: ErrorCode.FILE_NOT_TEXT,
        file,
        message: "file contains NUL bytes: it is binary, not YAML or JSON",
        hint: "remove it from the resource directory, or give it another extension",
      },
    };
  }
  try {
    let text = utf8.decode(bytes);
    if (text.charCodeAt(0) === 0xfeff) text = text.slice(1); // byte-order mark
    return { text };
  } catch {
    const at = firstInvalidUtf8(bytes);
    return {
      diagnostic: {
        severity: "error",
        code: ErrorCode.FILE_NOT_TEXT,
        file,
        ...at,
        message: "file is not valid UTF-8",
        hint: "save the file as UTF-8",
      },
    };
  }
}

function firstInvalidUtf8(bytes: Uint8Array): { line: number; column: number } {
  // Decode prefix by prefix at line boundaries: cheap, and only runs on the error path.
  let line = 1;
  let lineStart = 0;
  for (let i = 0; i < bytes.length; i++) {
    if (bytes[i] === 0x0a) {
      try {
        utf8.decode(bytes.subarray(lineStart, i));
      } catch {
        return { line, column: 1 };
      }
      line++;
      lineStart = i + 1;
    }
  }
  return { line, column: 1 };
}

/**
 * Parses text into JS values, one per document. Never throws. `keepTrees`: return the syntax
 * trees too, for a caller that will locate findings in the file while it holds them (a file
 * with findings is otherwise parsed a second time by its Locator). Without it, the values come
 * from the value-only parse (fast-yaml.ts) where it is sure to give the same, and findings'
 * positions from the Locator's parse of the file, on the error path only.
 */
export function parseYaml(text: string, file: string, limits: ReadLimits = defaultReadLimits, keepTrees = false): ParsedFile {
  // values only where no finding is to be located in the trees; `yaml` wherever the fast path is not sure
  const fast = keepTrees ? undefined : parseFast(text, limits);
  return fast === undefined ? parseYamlFully(text, file, limits, keepTrees) : { documents: fast, diagnostics: [] };
}

/** parseYaml with `yaml`'s composer: every syntax problem located, the trees kept on request. */
export function parseYamlFully(text: string, file: string, limits: ReadLimits = defaultReadLimits, keepTrees = false): ParsedFile {
  const diagnostics: Diagnostic[] = [];
  const lineCounter = new (yaml().LineCounter)();
  let docs: Document.Parsed[];
  try {
    const composed = composeDocuments(text, lineCounter, limits.maxDocumentsPerFile);
    if ("tooMany" in composed)
      return { documents: [], diagnostics: [tooManyDocuments(file, lineCounter.linePos(composed.tooMany), limits.maxDocumentsPerFile)] };
    docs = composed.docs;
  } catch (err) {
    diagnostics.push(tooDeep(file, err));
    return { documents: [], diagnostics };
  }
  const documents: ParsedDocument[] = [];
  docs.forEach((doc, index) => {
    const start = lineCounter.linePos((doc.contents as YamlNode | null)?.range?.[0] ?? doc.range[0]);
    const errors = documentErrors(doc);
    if (errors.length > 0) {
      diagnostics.push(...syntaxErrors(errors, text, file, lineCounter, start));
      return;
    }
    if (doc.contents === null || (yaml().isScalar(doc.contents) && doc.contents.value === null)) return; // empty document, e.g. a trailing `---`
    const read = documentValue(doc, file, limits, start);
    if ("diagnostic" in read) diagnostics.push(read.diagnostic);
    else documents.push({ index, value: read.value, line: start.line });
  });
  return { documents, diagnostics, ...(keepTrees ? { trees: { docs, lineCounter } } : {}) };
}

type Position = { readonly line: number; readonly col: number };

/**
 * The file's documents, composed one at a time so that counting them stops at the limit: 5 MB
 * of `---` lines is 1.3 million empty documents, and composing them all at once took ~1.3 GB
 * of heap (a daemon under a 352 MB heap died on every restart). `tooMany`: the offset of the
 * first document past the limit.
 */
function composeDocuments(text: string, lineCounter: LineCounter, max: number): { docs: Document.Parsed[] } | { tooMany: number } {
  const { Composer, Parser } = yaml();
  const parser = new Parser(lineCounter.addNewLine);
  // duplicate keys are found after, in one pass (documentErrors): yaml's own check is quadratic
  const composer = new Composer({ uniqueKeys: false, prettyErrors: false, strict: true });
  const docs: Document.Parsed[] = [];
  for (const doc of composer.compose(parser.parse(text), true, text.length)) {
    if (docs.length >= max) return { tooMany: doc.range[0] };
    docs.push(doc);
  }
  return { docs };
}

function tooManyDocuments(file: string, at: Position, max: number): Diagnostic {
  return {
    severity: "error",
    code: ErrorCode.YAML_TOO_MANY_DOCUMENTS,
    file,
    line: at.line,
    column: at.col,
    message: `file holds more than ${max} YAML documents (counting empty ones: each \`---\` starts one); this is document ${max + 1}`,
    hint: "split it into smaller files, remove stray `---` lines, or raise limits.maxDocumentsPerFile in gatesync.yaml",
  };
}

/** What is wrong with a document: what `yaml` found and its repeated keys, in the order of the text. */
interface DocumentError {
  readonly code: string;
  readonly message: string;
  readonly offset: number;
}

function documentErrors(doc: Document.Parsed): DocumentError[] {
  const found = doc.errors.map((e) => ({ code: e.code, message: e.message, offset: e.pos[0] }));
  const repeated = duplicateKeys(yaml(), doc).map((d) => ({ code: "DUPLICATE_KEY", message: "", offset: d.offset }));
  return repeated.length === 0 ? found : [...found, ...repeated].sort((a, b) => a.offset - b.offset);
}

/** A document's syntax errors, located (a stack overflow while parsing: too deep). */
function syntaxErrors(errors: readonly DocumentError[], text: string, file: string, lineCounter: LineCounter, start: Position): Diagnostic[] {
  const out: Diagnostic[] = [];
  for (const e of errors) {
    const pos = lineCounter.linePos(e.offset);
    const duplicate = e.code === "DUPLICATE_KEY";
    if (e.message.includes("call stack")) {
      out.push({ ...tooDeep(file, new RangeError()), line: start.line, column: start.col });
      continue;
    }
    out.push({
      severity: "error",
      code: duplicate ? ErrorCode.YAML_DUPLICATE_KEY : ErrorCode.YAML_SYNTAX,
      file,
      line: pos.line,
      column: pos.col,
      message: duplicate ? duplicateKeyMessage(text, e.offset) : firstLine(e.message),
      hint: duplicate ? "each key may appear once in a mapping: remove or rename one of them" : "fix the YAML syntax at this position",
    });
  }
  return out;
}

/** A document's value, or why it is refused: too many aliases, or nested too deep. */
function documentValue(doc: Document.Parsed, file: string, limits: ReadLimits, start: Position): { value: unknown } | { diagnostic: Diagnostic } {
  const at = { line: start.line, column: start.col };
  let value: unknown;
  try {
    value = doc.toJS({ maxAliasCount: limits.maxAliasCount });
  } catch (err) {
    if (err instanceof RangeError) return { diagnostic: { ...tooDeep(file, err), ...at } };
    return {
      diagnostic: {
        severity: "error",
        code: ErrorCode.YAML_ALIAS_LIMIT,
        file,
        ...at,
        message: `document expands too many aliases (more than ${limits.maxAliasCount}): refused as a possible alias bomb`,
        hint: "write the repeated values out, or use fewer anchors and aliases",
      },
    };
  }
  if (nestingDepth(value, limits.maxDepth) <= limits.maxDepth) return { value };
  return {
    diagnostic: {
      severity: "error",
      code: ErrorCode.YAML_TOO_DEEP,
      file,
      ...at,
      message: `document is nested more than ${limits.maxDepth} levels deep`,
      hint: "flatten the document; raise limits.maxDepth in gatesync.yaml if it is genuine",
    },
  };
}

function tooDeep(file: string, err: unknown): Diagnostic {
  return {
    severity: "error",
    code: ErrorCode.YAML_TOO_DEEP,
    file,
    message: err instanceof RangeError ? "document is nested too deeply to parse" : `file could not be parsed: ${String(err)}`,
    hint: "flatten the document",
  };
}

function firstLine(message: string): string {
  const line = message.split("\n", 1)[0] ?? message;
  return line.replace(/ at line \d+, column \d+:?$/, "");
}

function duplicateKeyMessage(text: string, offset: number): string {
  const match = /^["']?([^"':\n]+)/.exec(text.slice(offset, offset + 200));
  return match?.[1] === undefined ? "duplicate key in mapping" : `duplicate key \`${match[1].trim()}\` in mapping`;
}

/** Depth of nested objects/arrays, stopping as soon as `cap` is passed (iterative: no stack risk). */
export function nestingDepth(value: unknown, cap: number): number {
  let max = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, d] = stack.pop()!;
    if (v === null || typeof v !== "object") continue;
    if (d > max) {
      max = d;
      if (max > cap) return max;
    }
    for (const child of Array.isArray(v) ? v : Object.values(v)) {
      if (child !== null && typeof child === "object") stack.push([child, d + 1]);
    }
  }
  return max;
}
