/**
 * Text the value-only parse (fast-yaml.ts) does not take, found by looking at the few characters
 * that can start such a construct: where the two parsers were found to differ, or a construct
 * needs `yaml`'s own handling. Conservative — a description that merely looks like one of these
 * costs a full parse, nothing else. Written as scans for rare characters rather than one
 * regular expression: the expression, tried at every position, cost as much as a tenth of the
 * parse it guards.
 */

/** `yaml` refuses an implicit key longer than 1024 characters; a key and its `:` share a line. */
export const implicitKeyLimit = 1024;

const isBlank = (c: string | undefined): boolean => c === " " || c === "\t" || c === "\n" || c === "\r";
/** Where a node may start: after a separator or a flow indicator, or at the text's start. */
const startsNode = (text: string, at: number): boolean =>
  at === 0 || isBlank(text[at - 1]) || text[at - 1] === "," || text[at - 1] === "[" || text[at - 1] === "{";

/** Whether the fast path must leave `text` to `yaml`. */
export function needsFullParse(text: string): boolean {
  return someLine(text) || tagOrExplicitKey(text) || blockIndentIndicator(text) || flowCollectionKey(text) || commentAfterNode(text);
}

/**
 * A `#` right after a closing quote, a flow collection's end or a document marker (`""#c`,
 * `{a: 1}#c`, `---#c`, `...#c`): `yaml` refuses a comment not separated by white space, or reads
 * the marker as text, where js-yaml takes them otherwise. A `#` after `-` or `.` elsewhere
 * (`a-#b`) costs a full parse, nothing else. A quote where a node may start opens a scalar
 * (`'#/components/…'`, a `$ref`), and the `#` after it is the scalar's own.
 */
function commentAfterNode(text: string): boolean {
  for (let at = text.indexOf("#"); at !== -1; at = text.indexOf("#", at + 1)) {
    const before = text[at - 1];
    if (before === "}" || before === "]" || before === "-" || before === ".") return true;
    if ((before === '"' || before === "'") && !startsNode(text, at - 1) && text[at - 2] !== ":") return true;
  }
  return false;
}

/**
 * Line by line: a directive (`%YAML 1.1` changes the schema); a tab in indentation (`yaml`
 * refuses it where js-yaml does not); an empty sequence entry (`-` alone, `- -`: js-yaml may take
 * a less indented entry after it into its sequence); content on the `---` line (`yaml` refuses a
 * block collection there); a line longer than the implicit-key limit with a `:` past it.
 */
function someLine(text: string): boolean {
  for (let start = 0; start < text.length;) {
    let end = text.indexOf("\n", start);
    if (end === -1) end = text.length;
    if (text[start] === "%") return true;
    let i = start;
    let dashes = 0;
    let adjacent = false;
    for (; i < end; i++) {
      const c = text[i];
      if (c === "\t") return true;
      if (c === "-") {
        dashes++;
        if (text[i - 1] === "-" && i > start) adjacent = true;
      } else if (c !== " " && c !== "\r") break;
    }
    const comment = text[i] === "#" && i > start && isBlank(text[i - 1]);
    if (dashes > 0 && !adjacent && (i === end || comment)) return true;
    if (text.startsWith("---", start) && (text[start + 3] === " " || text[start + 3] === "\t")) {
      const rest = text.slice(start + 3, end).trim();
      if (rest !== "" && !rest.startsWith("#")) return true;
    }
    if (end - start > implicitKeyLimit) {
      const colon = text.indexOf(":", start + implicitKeyLimit);
      if (colon !== -1 && colon < end) return true;
    }
    start = end + 1;
  }
  return false;
}

/**
 * A tag (`!local`, `!<verbatim>`, `!!int`: resolved or warned of by the full parse), or an explicit
 * key (`? `: a collection may be the key). The core `!!str` followed by a space is the fast path's:
 * both parsers read the scalar after it as the same string (the fast schema knows `!!str` only,
 * on a scalar; on a collection js-yaml throws, and the full parse decides).
 */
function tagOrExplicitKey(text: string): boolean {
  for (let at = text.indexOf("!"); at !== -1; at = text.indexOf("!", at + 1)) {
    if (startsNode(text, at) && (!text.startsWith("!!str ", at) || indicatorAfterTag(text, at + "!!str ".length))) return true;
  }
  for (let at = text.indexOf("?"); at !== -1; at = text.indexOf("?", at + 1)) {
    if (startsNode(text, at) && (at + 1 === text.length || isBlank(text[at + 1]))) return true;
  }
  return false;
}

/**
 * Whether what follows a `!!str ` (from `at`, past blanks) may be something other than a plain or
 * quoted scalar: an indicator (`a: !!str :` is a mapping with an empty key to yaml, an error in a
 * compact mapping, and js-yaml reads it otherwise). The full parse decides those.
 */
function indicatorAfterTag(text: string, at: number): boolean {
  let i = at;
  while (text[i] === " " || text[i] === "\t") i++;
  const next = text[i];
  return next !== undefined && ":-?[]{},&*!|>#%@`".includes(next);
}

/** A block scalar's explicit indentation (`|2`, `>-1`): the parsers read it differently at the top level. */
function blockIndentIndicator(text: string): boolean {
  for (const indicator of ["|", ">"]) {
    for (let at = text.indexOf(indicator); at !== -1; at = text.indexOf(indicator, at + 1)) {
      if (at > 0 && text[at - 1] !== " " && text[at - 1] !== "\t" && text[at - 1] !== "\n") continue;
      const next = text[at + 1] === "-" || text[at + 1] === "+" ? text[at + 2] : text[at + 1];
      if (next !== undefined && next >= "0" && next <= "9") return true;
    }
  }
  return false;
}

const collectionKeyEnd = /[\]}][ \t]*:/g;
const collectionKeyLine = /(?:^[ \t-]*|[[{,][ \t]*)[[{]/;

/**
 * A flow collection as a key (`[a, b]: c`): a `]` or `}` before a `:`, on a line where a
 * collection starts where a key does — at the line's start, after `- `, `{`, `[` or `,` (a plain
 * key may end in `}`, as OpenAPI callback expressions do).
 */
function flowCollectionKey(text: string): boolean {
  collectionKeyEnd.lastIndex = 0;
  for (let m = collectionKeyEnd.exec(text); m !== null; m = collectionKeyEnd.exec(text)) {
    const lineStart = text.lastIndexOf("\n", m.index) + 1;
    if (collectionKeyLine.test(text.slice(lineStart, m.index + 1))) return true;
  }
  return false;
}
