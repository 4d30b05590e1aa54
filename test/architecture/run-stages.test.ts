/**
 * docs/dev/architecture.md's "The run" lists the run's stages as `runStages` (src/run/run-stages.ts)
 * calls them: the functions it imports from the stage modules, in the order it first calls each.
 * A stage added, removed, renamed or moved in the function and not in the document (or the
 * reverse) fails here, naming both lists.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { projectRoot } from "./source-files.js";

const stagesFile = "src/run/run-stages.ts";
const stageModules = new Set(["./plan-stages.js", "./apply-stages.js", "./ownership-stages.js"]);

/** The names a file imports, as values, from the stage modules. */
function stageImports(source: ts.SourceFile): Set<string> {
  const names = new Set<string>();
  for (const statement of source.statements) {
    if (!ts.isImportDeclaration(statement) || !ts.isStringLiteral(statement.moduleSpecifier)) continue;
    if (!stageModules.has(statement.moduleSpecifier.text) || statement.importClause?.isTypeOnly === true) continue;
    const bindings = statement.importClause?.namedBindings;
    if (bindings === undefined || !ts.isNamedImports(bindings)) continue;
    for (const element of bindings.elements) if (!element.isTypeOnly) names.add(element.name.text);
  }
  return names;
}

/** The stages `runStages` calls, each once, in the order of its first call (its implementation, not its overloads). */
function stagesInCode(text: string): string[] {
  const source = ts.createSourceFile(stagesFile, text, ts.ScriptTarget.Latest, true);
  const stages = stageImports(source);
  const body = source.statements.find((s): s is ts.FunctionDeclaration => ts.isFunctionDeclaration(s) && s.name?.text === "runStages" && s.body !== undefined);
  const called: string[] = [];
  const visit = (node: ts.Node): void => {
    if (ts.isCallExpression(node) && ts.isIdentifier(node.expression) && stages.has(node.expression.text) && !called.includes(node.expression.text))
      called.push(node.expression.text);
    ts.forEachChild(node, visit);
  };
  if (body !== undefined) visit(body);
  return called;
}

/** The numbered list of the document's "The run" section: each item's first code span. */
function stagesInDoc(doc: string): string[] {
  const start = doc.indexOf("\n## The run\n");
  if (start < 0) return [];
  const end = doc.indexOf("\n## ", start + 1);
  const section = doc.slice(start, end < 0 ? undefined : end);
  return [...section.matchAll(/^\d+\. `([^`]+)`/gm)].map((m) => m[1] ?? "");
}

describe("docs/dev/architecture.md's run stages", () => {
  it("are the stages runStages calls, in its order", () => {
    const code = stagesInCode(readFileSync(path.join(projectRoot, stagesFile), "utf8"));
    const doc = stagesInDoc(readFileSync(path.join(projectRoot, "docs/dev/architecture.md"), "utf8"));
    expect(code.length).toBeGreaterThan(5);
    expect(doc).toEqual(code);
  });

  it("tell a stage moved in the code from the document's order", () => {
    const text = [
      'import { b, a } from "./plan-stages.js";',
      'import { c } from "./apply-stages.js";',
      "export async function runStages(x: number): Promise<void>;",
      "export async function runStages(x: number) { await a(); b(a()); other(); await c(); }",
    ].join("\n");
    expect(stagesInCode(text)).toEqual(["a", "b", "c"]);
    expect(stagesInDoc("# t\n\n## The run\n\n1. `b` — x\n2. `a` — y\n\n## Next\n\n3. `c` — z\n")).toEqual(["b", "a"]);
  });
});
