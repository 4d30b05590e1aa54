/**
 * Every loop, timer and watcher of the daemon is listed in docs/dev/architecture.md ("The
 * daemon's loops and caches"): this reads the code of src/daemon/, src/promotion/ and src/fleet/
 * with the TypeScript compiler for what starts one — a call of `setTimeout` or `setInterval`, an
 * import of `node:timers/promises` (its `setTimeout`, a loop's wait) or of chokidar, a call of
 * `watchFile` or of a `.watch(` — and fails naming each file the section's table of loops does
 * not name. A file the table names must exist, so the list cannot go stale either way.
 */
import { existsSync, readFileSync } from "node:fs";
import path from "node:path";
import ts from "typescript";
import { describe, expect, it } from "vitest";
import { handWrittenFiles, projectRoot } from "./source-files.js";

const scanned = ["src/daemon", "src/promotion", "src/fleet"];

const timerCalls = new Set(["setTimeout", "setInterval", "watchFile", "watch"]);
const timerModules = new Set(["node:timers/promises", "timers/promises", "chokidar"]);

/** What in `text` starts a loop, a timer or a watcher: one line per find, e.g. `setTimeout (line 12)`. */
function timersIn(text: string): string[] {
  const file = ts.createSourceFile("x.ts", text, ts.ScriptTarget.Latest, true);
  const found: string[] = [];
  const at = (node: ts.Node): number => file.getLineAndCharacterOfPosition(node.getStart(file)).line + 1;
  const visit = (node: ts.Node): void => {
    if (ts.isImportDeclaration(node) && ts.isStringLiteral(node.moduleSpecifier) && timerModules.has(node.moduleSpecifier.text))
      found.push(`import of ${node.moduleSpecifier.text} (line ${at(node)})`);
    if (ts.isCallExpression(node)) {
      const callee = node.expression;
      const name = ts.isIdentifier(callee) ? callee.text : ts.isPropertyAccessExpression(callee) ? callee.name.text : undefined;
      if (name !== undefined && timerCalls.has(name)) found.push(`${name} (line ${at(node)})`);
    }
    ts.forEachChild(node, visit);
  };
  visit(file);
  return found;
}

/** The section's text ("" when it is missing). */
function section(doc: string): string {
  return doc.split(/^## /m).find((s) => s.startsWith("The daemon's loops and caches\n")) ?? "";
}

/** The section's first table (the loops and timers), as text. */
function loopsTable(doc: string): string {
  const lines = section(doc).split("\n");
  const first = lines.findIndex((l) => l.startsWith("|"));
  if (first === -1) return "";
  const after = lines.findIndex((l, i) => i > first && !l.startsWith("|"));
  return lines.slice(first, after === -1 ? undefined : after).join("\n");
}

/** The files a text names (`daemon/loop/reconciler.ts` below src/, or `src/fleet/leases.ts`, `test/…`), project-relative. */
function namedFiles(text: string): string[] {
  return [...text.matchAll(/`([\w./-]+\.ts)`/g)].map((m) => (/^(src|test)\//.test(m[1]!) ? m[1]! : `src/${m[1]!}`));
}

const doc = readFileSync(path.join(projectRoot, "docs/dev/architecture.md"), "utf8");

describe("the daemon's loops and caches (docs/dev/architecture.md)", () => {
  it("finds timers, loops' waits and watchers in code, and nothing in comments or names alike", () => {
    const sample = [
      'import { setTimeout as sleep } from "node:timers/promises";',
      'import { watch as chokidarWatch } from "chokidar";',
      "// setTimeout(() => undefined, 1) in a comment",
      "const t = setTimeout(() => undefined, 10);",
      "globalThis.setInterval(() => undefined, 10);",
      "watchFile(file, { interval: 1000 }, () => undefined);",
      "this.inner.watch?.(() => undefined);",
      "const watchers = 0; clearTimeout(t); watched();",
    ].join("\n");
    expect(timersIn(sample)).toEqual([
      "import of node:timers/promises (line 1)",
      "import of chokidar (line 2)",
      "setTimeout (line 4)",
      "setInterval (line 5)",
      "watchFile (line 6)",
      "watch (line 7)",
    ]);
    expect(namedFiles("| a | `daemon/loop/reconciler.ts` | `src/fleet/leases.ts`, `x` |")).toEqual(["src/daemon/loop/reconciler.ts", "src/fleet/leases.ts"]);
  });

  it("names every file of src/daemon, src/promotion and src/fleet that starts a loop, a timer or a watcher", () => {
    const table = loopsTable(doc);
    expect(table, "the section and its table of loops").toMatch(/^\| Where \| Loop or timer \|/);
    const named = new Set(namedFiles(table));
    const files = handWrittenFiles(["src"]).filter((f) => scanned.some((folder) => f.startsWith(`${folder}/`)));
    const withTimers = files.map((f) => ({ f, found: timersIn(readFileSync(path.join(projectRoot, f), "utf8")) })).filter((x) => x.found.length > 0);
    // the reconciler, the verifier, the leases, the config watcher at least: a scan that finds none is broken
    expect(withTimers.length).toBeGreaterThanOrEqual(6);
    const unnamed = withTimers.filter((x) => !named.has(x.f)).map((x) => `${x.f}: ${x.found.join(", ")}`);
    expect(unnamed, "add a row for each to the table of loops in docs/dev/architecture.md").toEqual([]);
  });

  it("names no file that does not exist", () => {
    const missing = [...new Set(namedFiles(section(doc)))].filter((f) => !existsSync(path.join(projectRoot, f)));
    expect(missing).toEqual([]);
  });
});
