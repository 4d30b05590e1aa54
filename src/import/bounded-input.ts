/**
 * Reading a source's files as data from someone else: every path checked to stay inside the
 * source's root (`../`, absolute names, symlinks out), every size bounded before a byte is read
 * (lstat, then a read of at most the bound), JSON's nesting counted on the text before it is
 * parsed (JSON.parse recurses: text/json-depth.ts, the scanner the sandbox's bodies go through too), YAML through the one reader with its depth and alias limits.
 */
import { closeSync, lstatSync, openSync, readSync, realpathSync } from "node:fs";
import path from "node:path";
import { isInside, toPosix } from "../file-paths.js";
import { parseYaml } from "../load/yaml-reader.js";
import { defaultReadLimits } from "../load/parsed-yaml.js";
import { jsonTooDeep } from "../text/json-depth.js";

export interface InputLimits {
  /** Most bytes of one file. */
  readonly maxFileBytes: number;
  /** Deepest nesting of objects and arrays. */
  readonly maxDepth: number;
  /** Most files one source lists. */
  readonly maxFiles: number;
}

export const defaultInputLimits: InputLimits = { maxFileBytes: 16 * 1024 * 1024, maxDepth: defaultReadLimits.maxDepth, maxFiles: 100_000 };

/** A file that cannot be read as the source's data: a located reason, never its content. */
export class InputProblem extends Error {
  constructor(
    message: string,
    readonly hint?: string,
  ) {
    super(message);
  }
}

const realRoots = new Map<string, string>();
/** A source root's real path, resolved once per root (every file of a dump is checked against it). */
function realRoot(root: string): string {
  let found = realRoots.get(root);
  if (found === undefined) realRoots.set(root, (found = realpathSync.native(root)));
  return found;
}

/**
 * The absolute path of `name` below `root`, refused when it is absolute, climbs out with `..`,
 * or resolves (through a symlink) outside the root's real path.
 */
export function insidePath(root: string, name: string): string {
  if (name === "" || path.isAbsolute(name) || path.win32.isAbsolute(name) || name.includes("\0")) {
    throw new InputProblem(`file name ${JSON.stringify(name)} is not a relative name inside the source`, "a dump names its files relative to its index");
  }
  const joined = path.resolve(root, name);
  if (!isInside(joined, root)) throw new InputProblem(`file name ${JSON.stringify(name)} leads outside the source`, "names with `..` are refused");
  let real: string;
  try {
    // synchronous, as the reads below: a dump's 10,000 files cost two thread-pool round trips each otherwise (~0.5 s)
    real = realpathSync.native(joined);
  } catch {
    throw new InputProblem(`file ${JSON.stringify(toPosix(name))} does not exist`);
  }
  if (!isInside(real, realRoot(root)))
    throw new InputProblem(`file ${JSON.stringify(toPosix(name))} is a link to outside the source`, "copy the file into the dump");
  return real;
}

/**
 * The file's text, refused past `limit` bytes (its size read first) or when it is not UTF-8.
 * Read synchronously: an import is a command with nothing else to serve, and 10,000 small files
 * read through promises spent more in the thread pool's round trips than in reading.
 */
export function boundedText(file: string, limits: InputLimits): string {
  const stat = lstatSync(file);
  if (!stat.isFile()) throw new InputProblem("not a regular file");
  if (stat.size > limits.maxFileBytes) {
    throw new InputProblem(`file is ${stat.size} bytes, more than the ${limits.maxFileBytes} an import reads`, "split the source, or pass --max-file-bytes");
  }
  const fd = openSync(file, "r");
  try {
    const buffer = Buffer.alloc(Math.min(stat.size, limits.maxFileBytes) + 1);
    const bytesRead = readSync(fd, buffer, 0, buffer.length, 0);
    if (bytesRead > limits.maxFileBytes) throw new InputProblem(`file grew past the ${limits.maxFileBytes} bytes an import reads`);
    return new TextDecoder("utf-8", { fatal: true }).decode(buffer.subarray(0, bytesRead));
  } catch (err) {
    if (err instanceof TypeError) throw new InputProblem("file is not UTF-8 text");
    throw err;
  } finally {
    closeSync(fd);
  }
}

/** JSON text parsed, its depth bounded first. */
export function parseJsonBounded(text: string, limits: InputLimits): unknown {
  if (jsonTooDeep(text, limits.maxDepth)) {
    throw new InputProblem(`JSON is nested more than ${limits.maxDepth} deep`, "an import refuses documents nested deeper than any real definition");
  }
  try {
    return JSON.parse(text) as unknown;
  } catch (err) {
    // V8's message quotes the text around the fault, which may be a secret: only its position is said
    const at = /at position (\d+)/.exec((err as Error).message)?.[1];
    throw new InputProblem(`not JSON${at === undefined ? "" : ` (at character ${at})`}`);
  }
}

/** The documents of a YAML (or JSON) text, through the one YAML reader and its limits. */
export function parseYamlDocuments(text: string, file: string, limits: InputLimits): { value: unknown; index: number; line: number }[] {
  const trimmed = text.trimStart();
  if (trimmed.startsWith("{") || trimmed.startsWith("[")) return [{ value: parseJsonBounded(text, limits), index: 0, line: 1 }];
  const parsed = parseYaml(text, file, { ...defaultReadLimits, maxDepth: limits.maxDepth });
  const first = parsed.diagnostics[0];
  if (first !== undefined) throw new InputProblem(`line ${first.line}: ${first.message}`, first.hint);
  return parsed.documents.map((d) => ({ value: d.value, index: d.index, line: d.line }));
}

/** A source file read and parsed: JSON, or YAML when the name says so (or it does not start like JSON). */
export function readSourceFile(root: string, name: string, limits: InputLimits): { value: unknown; index: number; line: number }[] {
  const file = insidePath(root, name);
  const text = boundedText(file, limits);
  return parseYamlDocuments(text, name, limits);
}
