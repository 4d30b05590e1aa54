/**
 * The import graph of src/ between modules: each top folder is a module, and so is each file
 * directly in src/ (`cli.ts`, the entry point, is left out). Read statically with the
 * TypeScript compiler's `ts.preProcessFile` (static, type-only, re-exports, dynamic `import()`).
 * And the same graph file by file (`fileImports`), each import marked whether only types cross it.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import type { Edges } from "./graph-cycles.js";

const srcRoot = path.resolve(import.meta.dirname, "../../src");
const entryPoint = "cli.ts";

function sourceFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((entry) => {
    const full = path.join(dir, entry.name);
    if (entry.isDirectory()) return sourceFiles(full);
    return entry.name.endsWith(".ts") ? [full] : [];
  });
}

/** The module a file belongs to: its top folder under src/, or the file itself at the root. */
export function moduleOf(relative: string): string {
  const parts = relative.split("/");
  return parts.length > 1 ? `${parts[0] ?? ""}/` : relative;
}

export function importEdges(): Edges {
  const edges: Edges = new Map();
  for (const file of sourceFiles(srcRoot)) {
    const from = moduleOf(path.relative(srcRoot, file).split(path.sep).join("/"));
    if (from === entryPoint) continue;
    const text = readFileSync(file, "utf8");
    for (const imported of ts.preProcessFile(text, true, true).importedFiles) {
      if (!imported.fileName.startsWith(".")) continue;
      const target = path.resolve(path.dirname(file), imported.fileName).replace(/\.js$/, ".ts");
      const to = moduleOf(path.relative(srcRoot, target).split(path.sep).join("/"));
      if (to === from) continue;
      const out = edges.get(from) ?? new Map<string, string>();
      if (!out.has(to)) out.set(to, `${path.relative(srcRoot, file)} imports ${imported.fileName}`);
      edges.set(from, out);
    }
  }
  return edges;
}

/** One file importing another, both relative to src/. */
export interface FileImport {
  from: string;
  to: string;
  /** Only types cross it (`import type`, `export type`, every named import `type`, `import("…")` in a type): nothing runs. */
  typeOnly: boolean;
  /** 1-based line of the import in `from`. */
  line: number;
}

function isTypeOnlyImport(node: ts.ImportDeclaration): boolean {
  const clause = node.importClause;
  if (clause === undefined) return false;
  if (clause.isTypeOnly) return true;
  const named = clause.namedBindings;
  return clause.name === undefined && named !== undefined && ts.isNamedImports(named) && named.elements.length > 0 && named.elements.every((e) => e.isTypeOnly);
}

/** The relative module a node names, and whether only types cross it. */
function importOf(node: ts.Node): { specifier: ts.Expression; typeOnly: boolean } | undefined {
  if (ts.isImportDeclaration(node)) return { specifier: node.moduleSpecifier, typeOnly: isTypeOnlyImport(node) };
  if (ts.isExportDeclaration(node) && node.moduleSpecifier !== undefined) return { specifier: node.moduleSpecifier, typeOnly: node.isTypeOnly };
  if (ts.isImportTypeNode(node) && ts.isLiteralTypeNode(node.argument)) return { specifier: node.argument.literal, typeOnly: true };
  if (ts.isCallExpression(node) && node.expression.kind === ts.SyntaxKind.ImportKeyword && node.arguments[0] !== undefined) {
    return { specifier: node.arguments[0], typeOnly: false };
  }
  return undefined;
}

function importsOfFile(file: string): FileImport[] {
  const source = ts.createSourceFile(file, readFileSync(file, "utf8"), ts.ScriptTarget.Latest, true);
  const from = path.relative(srcRoot, file).split(path.sep).join("/");
  const found: FileImport[] = [];
  const visit = (node: ts.Node): void => {
    const imported = importOf(node);
    if (imported !== undefined && ts.isStringLiteral(imported.specifier) && imported.specifier.text.startsWith(".")) {
      const target = path.resolve(path.dirname(file), imported.specifier.text).replace(/\.js$/, ".ts");
      const to = path.relative(srcRoot, target).split(path.sep).join("/");
      const line = source.getLineAndCharacterOfPosition(node.getStart(source)).line + 1;
      found.push({ from, to, typeOnly: imported.typeOnly, line });
    }
    ts.forEachChild(node, visit);
  };
  visit(source);
  return found;
}

/** Every import of one src/ file by another, file by file. */
export function fileImports(): FileImport[] {
  return sourceFiles(srcRoot).flatMap(importsOfFile);
}
