/**
 * The import graph of src/ between modules: each top folder is a module, and so is each file
 * directly in src/ (`cli.ts`, the entry point, is left out). Read statically with the
 * TypeScript compiler's `ts.preProcessFile` (static, type-only, re-exports, dynamic `import()`).
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";

const srcRoot = path.resolve(import.meta.dirname, "../../src");
const entryPoint = "cli.ts";

/** An example import behind an edge between two modules, for the failure message. */
export type Edges = Map<string, Map<string, string>>;

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
