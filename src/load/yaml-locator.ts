/**
 * Positions of findings: a member's line and column in one document of a file, from `yaml`'s
 * syntax trees (made again from the text on the error path, or the reader's own).
 */
import type { YamlNode } from "../yaml/yaml-library.js";
import type { PathSegment } from "../text/field-path.js";
import { yaml } from "./yaml-reader.js";
import type { SyntaxTrees } from "./yaml-reader.js";

/**
 * Finds line and column of a field inside one document of a file. Used only on the error
 * path: it parses the file's text again instead of keeping every syntax tree in memory, and
 * keeps the trees it made for further look-ups in the same files.
 *
 * With `key: true`, points at the key of the last segment (for "unknown field" errors);
 * when the path does not exist, points at the deepest part that does.
 */
export class Locator {
  private readonly trees = new Map<string, SyntaxTrees>();
  private readonly textOf: (file: string) => string | undefined;

  /**
   * `texts`: the files' texts, or a function that reads one when a position is asked for.
   * `parsed`: trees of files the caller parsed already (parseYaml's `keepTrees`), used as they are.
   */
  constructor(texts: ReadonlyMap<string, string> | ((file: string) => string | undefined), parsed?: ReadonlyMap<string, SyntaxTrees>) {
    this.textOf = typeof texts === "function" ? texts : (file) => texts.get(file);
    for (const [file, trees] of parsed ?? []) this.trees.set(file, trees);
  }

  locate(file: string, docIndex: number, path: readonly PathSegment[], opts: { key?: boolean } = {}): { line: number; column: number } | undefined {
    const tree = this.tree(file);
    const doc = tree?.docs[docIndex];
    const { isAlias, isMap, isPair, isScalar, isSeq } = yaml();
    if (tree === undefined || doc === undefined) return undefined;
    let node: unknown = doc.contents;
    let offset = (node as YamlNode | null)?.range?.[0] ?? doc.range[0];
    for (let i = 0; i < path.length; i++) {
      const seg = path[i];
      if (isAlias(node)) node = node.resolve(doc);
      if (isMap(node)) {
        const pair = node.items.find((p) => isPair(p) && isScalar(p.key) && String(p.key.value) === String(seg));
        if (pair === undefined) break;
        const keyRange = (pair.key as YamlNode).range;
        if (i === path.length - 1 && opts.key === true && keyRange !== undefined && keyRange !== null) {
          offset = keyRange[0];
          break;
        }
        node = pair.value;
        offset = (pair.value as YamlNode | null)?.range?.[0] ?? keyRange?.[0] ?? offset;
      } else if (isSeq(node) && typeof seg === "number") {
        const item = node.items[seg] as YamlNode | undefined;
        if (item === undefined) break;
        node = item;
        offset = item.range?.[0] ?? offset;
      } else {
        break;
      }
    }
    const pos = tree.lineCounter.linePos(offset);
    return { line: pos.line, column: pos.col };
  }

  private tree(file: string): SyntaxTrees | undefined {
    let tree = this.trees.get(file);
    if (tree === undefined) {
      const text = this.textOf(file);
      if (text === undefined) return undefined;
      const lineCounter = new (yaml().LineCounter)();
      try {
        const parsed = yaml().parseAllDocuments(text, { lineCounter, prettyErrors: false });
        tree = { docs: Array.isArray(parsed) ? parsed : [], lineCounter };
      } catch {
        tree = { docs: [], lineCounter };
      }
      this.trees.set(file, tree);
    }
    return tree;
  }
}
