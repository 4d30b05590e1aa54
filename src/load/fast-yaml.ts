/**
 * The value-only parse: a file's documents as plain values, without the syntax trees `yaml`
 * composes (its `Document` nodes were half of a file-checking thread's CPU on a repository of
 * OpenAPI documents). js-yaml builds values straight from the text, about ten times faster;
 * JSON text goes through `JSON.parse`.
 *
 * It is an accelerator, never a second dialect: it answers only where it is sure to give what
 * `parseYaml`'s full parse gives (the same values, document indexes and start lines), and says
 * "not sure" (`undefined`) everywhere else — any error, anchors and aliases (the alias limit),
 * tags but `!!str` on a scalar, directives, collections as keys, null keys, keys the 1024-character rule might refuse,
 * nesting past the limit, very many documents. The caller then parses with `yaml`, which
 * reports every problem located as before. Equivalence is tested property by property
 * (test/load/fast-yaml.test.ts).
 */
import { Schema, Type, loadAll } from "../yaml/js-yaml-library.js";
import type { LoadOptions, State } from "../yaml/js-yaml-library.js";
import { defaultReadLimits } from "./parsed-yaml.js";
import type { ParsedDocument, ReadLimits } from "./parsed-yaml.js";
import { implicitKeyLimit, needsFullParse } from "./fast-yaml-guards.js";

/**
 * Plain scalars resolve as in `yaml`'s YAML 1.2 core schema (its `test` patterns and `resolve`
 * functions, in its order), not js-yaml's own core schema (which differs: `0b` integers, `_`
 * separators, no `0o`). The tags are private, so an explicit `!!int` is an unknown tag to js-yaml
 * (an error: the full parse decides; the guards send it there first); `resolve` refuses a call with a tag (an explicit verbatim one).
 */
function coreType(name: string, test: RegExp, construct: (source: string) => unknown): Type {
  return new Type(`tag:gatesync.dev,2026:fast-${name}`, {
    kind: "scalar",
    // js-yaml passes the explicit tag as a second argument (not in its typings)
    resolve: (...args: unknown[]) => args.length === 1 && typeof args[0] === "string" && test.test(args[0]),
    construct: (source: string) => construct(source),
  });
}

const coreSchema = new Schema({
  // the one explicit tag the guards let through (`!!str `): a scalar's text as it is, "" when empty
  explicit: [new Type("tag:yaml.org,2002:str", { kind: "scalar", construct: (data: string | null) => data ?? "" })],
  implicit: [
    coreType("null", /^(?:~|[Nn]ull|NULL)?$/, () => null),
    coreType("bool", /^(?:[Tt]rue|TRUE|[Ff]alse|FALSE)$/, (s) => s[0] === "t" || s[0] === "T"),
    coreType("int-oct", /^0o[0-7]+$/, (s) => parseInt(s.substring(2), 8)),
    coreType("int", /^[-+]?[0-9]+$/, (s) => parseInt(s, 10)),
    coreType("int-hex", /^0x[0-9a-fA-F]+$/, (s) => parseInt(s.substring(2), 16)),
    coreType("float-nan", /^(?:[-+]?\.(?:inf|Inf|INF)|\.nan|\.NaN|\.NAN)$/, (s) =>
      s.slice(-3).toLowerCase() === "nan" ? NaN : s[0] === "-" ? Number.NEGATIVE_INFINITY : Number.POSITIVE_INFINITY,
    ),
    coreType("float-exp", /^[-+]?(?:\.[0-9]+|[0-9]+(?:\.[0-9]*)?)[eE][-+]?[0-9]+$/, (s) => parseFloat(s)),
    coreType("float", /^[-+]?(?:\.[0-9]+|[0-9]+\.[0-9]*)$/, (s) => parseFloat(s)),
  ],
});

/** What js-yaml's parser state holds beyond its typings: read by the listener. */
interface ParserState extends State {
  readonly depth: number;
  readonly tag: string | null;
  readonly anchor: string | null;
}

/** Thrown from the listener to stop at the first construct the fast path does not answer for. */
class NotSure extends Error {}

const loneCarriageReturn = /\r(?!\n)/;

/** A quote character: the last of a quoted scalar (or of a plain one, which costs a full parse). */
const quote = (c: number): boolean => c === 0x22 || c === 0x27;

/** Documents a text holds at most: separators counted, cheaply, before anything is parsed. */
function documentsAtMost(text: string): number {
  let n = 1;
  for (let at = text.indexOf("---"); at !== -1; at = text.indexOf("---", at + 3)) n++;
  for (let at = text.indexOf("..."); at !== -1; at = text.indexOf("...", at + 3)) n++;
  return n;
}

/**
 * The documents of a YAML (or JSON) text as the full parse would give them, or undefined when
 * the fast path cannot be sure (the caller then parses with `yaml`). Never throws.
 */
export function parseFast(text: string, limits: ReadLimits): ParsedDocument[] | undefined {
  // a lone carriage return: the parsers count lines differently (and `yaml` refuses it after JSON)
  if (loneCarriageReturn.test(text)) return undefined;
  const first = /\S/.exec(text);
  if (first !== null && (first[0] === "{" || first[0] === "[")) {
    const json = parseJson(text, first.index, limits);
    if (json !== undefined) return json;
  }
  // twice the margin: the two parsers need not count empty documents alike near the limit
  if (documentsAtMost(text) * 2 > limits.maxDocumentsPerFile || needsFullParse(text)) return undefined;
  const starts: number[] = [];
  // line of each open node, by depth: a quoted scalar that spans lines is left to `yaml`, which
  // checks its continuation lines' indentation where js-yaml does not
  const openLines: number[] = [];
  const values: unknown[] = [];
  const options: LoadOptions & { maxDepth: number } = {
    schema: coreSchema,
    // a scalar sits one level below the deepest collection allowed
    maxDepth: limits.maxDepth + 2,
    listener(event, state) {
      const s = state as ParserState;
      if (event === "open") {
        openLines[s.depth] = s.line;
        if (s.depth !== 1) return;
        // an indented top-level node: js-yaml accepts less indented lines after it that `yaml` refuses
        if (s.position !== s.lineStart) throw new NotSure();
        starts.push(s.line + 1);
        return;
      }
      if (s.anchor !== null || s.tag === "!") throw new NotSure();
      if (s.kind === "scalar" && s.line !== openLines[s.depth] && quote(s.input.charCodeAt(s.position - 1))) throw new NotSure();
      if (s.kind === "mapping" || s.kind === "sequence") {
        if (s.depth > limits.maxDepth) throw new NotSure();
        // `yaml` names a null key "" and a collection key by its YAML text; js-yaml "null" and "[object Object]"
        if (s.kind === "mapping" && ("null" in (s.result as object) || "[object Object]" in (s.result as object))) throw new NotSure();
      }
    },
  };
  try {
    loadAll(text, (doc) => values.push(doc), options);
  } catch {
    return undefined;
  }
  if (starts.length !== values.length) return undefined;
  const documents: ParsedDocument[] = [];
  values.forEach((value, index) => {
    // an empty document (a trailing `---`, a comment only) is no document to check
    if (value !== null && value !== undefined) documents.push({ index, value, line: starts[index]! });
  });
  return documents;
}

/**
 * JSON text through `JSON.parse`, where it gives what `yaml` gives: no duplicate key (JSON.parse
 * keeps the last silently; `yaml` refuses), no key the 1024-character rule refuses, no integer
 * past 2^53 (parsed by `yaml` with `parseInt`), nesting within the limit.
 */
function parseJson(text: string, start: number, limits: ReadLimits): ParsedDocument[] | undefined {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    return undefined;
  }
  const keys = jsonKeys(text);
  if (keys === undefined) return undefined;
  const shape = walkJson(value, limits.maxDepth);
  if (shape === undefined || shape.keys !== keys) return undefined;
  if (value === null) return [];
  let line = 1;
  for (let at = text.indexOf("\n"); at !== -1 && at < start; at = text.indexOf("\n", at + 1)) line++;
  return [{ index: 0, value, line }];
}

/** Keys in a JSON text (strings followed by `:`), or undefined for a key the full parse might refuse. */
function jsonKeys(text: string): number | undefined {
  let keys = 0;
  for (let open = text.indexOf('"'); open !== -1;) {
    let close = text.indexOf('"', open + 1);
    while (close !== -1 && escaped(text, close)) close = text.indexOf('"', close + 1);
    if (close === -1) return undefined;
    let next = close + 1;
    while (text[next] === " " || text[next] === "\t") next++;
    if (text[next] === ":") {
      keys++;
      if (next - open > implicitKeyLimit) return undefined;
    } else if (text[next] === "\n" || text[next] === "\r") {
      // a key whose `:` is on a later line: `yaml` refuses a multi-line implicit key
      let after = next;
      while (/\s/.test(text[after] ?? "")) after++;
      if (text[after] === ":") return undefined;
    }
    open = text.indexOf('"', next);
  }
  return keys;
}

/** Whether the quote at `at` is escaped (an odd number of backslashes before it). */
function escaped(text: string, at: number): boolean {
  let n = 0;
  while (text.charCodeAt(at - 1 - n) === 0x5c) n++;
  return n % 2 === 1;
}

/** Keys of every object in a JSON value, or undefined past the depth limit or for an unsafe integer. */
function walkJson(value: unknown, maxDepth: number): { keys: number } | undefined {
  let keys = 0;
  const stack: Array<[unknown, number]> = [[value, 1]];
  while (stack.length > 0) {
    const [v, depth] = stack.pop()!;
    if (typeof v === "number" && Number.isInteger(v) && !Number.isSafeInteger(v)) return undefined;
    if (v === null || typeof v !== "object") continue;
    if (depth > maxDepth) return undefined;
    const children = Array.isArray(v) ? (v as unknown[]) : Object.values(v);
    if (!Array.isArray(v)) keys += children.length;
    for (const child of children) stack.push([child, depth + 1]);
  }
  return { keys };
}

/**
 * The value of a text of one document, or undefined (none, several, or not sure): the parse of
 * SOPS files (secrets/sops-tree.ts), handed to the secret source by the commands that make one,
 * since secrets/ imports no folder.
 */
export function oneDocumentFast(text: string): unknown {
  const documents = parseFast(text, defaultReadLimits);
  return documents?.length === 1 && documents[0]!.index === 0 ? documents[0]!.value : undefined;
}
