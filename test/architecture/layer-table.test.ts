/**
 * docs/dev/architecture.md's layer table is the import graph of src/, row for row: a module that
 * imports what its row does not list, or a row listing what its module no longer imports, fails
 * here naming both — so the table a maintainer reads is never out of date.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../helpers/temp-repo.js";
import { importEdges } from "./import-graph.js";

/**
 * Folders of root leaves: text helpers and the one YAML door. They import no folder, so, like a
 * file directly in src/, every module may import them and their row lists none of them.
 */
const leafFolders = new Set(["text/", "yaml/"]);

const isRoot = (module: string): boolean => !module.endsWith("/") || leafFolders.has(module);

/** Module → what its row lists, read from the table's second and third columns. */
function tableRows(doc: string): Map<string, Set<string>> {
  const rows = new Map<string, Set<string>>();
  for (const line of doc.split("\n")) {
    const cells = line.split("|").map((c) => c.trim());
    const module = /^`([^`]+)`$/.exec(cells[2] ?? "")?.[1];
    if (module === undefined || module === "cli.ts") continue;
    rows.set(module, new Set([...(cells[3] ?? "").matchAll(/`([^`]+)`/g)].map((m) => m[1] ?? "")));
  }
  return rows;
}

/** Every module of src/ but the entry point: its folders and its root files. */
function modules(): string[] {
  return readdirSync(path.join(projectRoot, "src"), { withFileTypes: true })
    .filter((e) => e.isDirectory() || e.name.endsWith(".ts"))
    .map((e) => (e.isDirectory() ? `${e.name}/` : e.name))
    .filter((m) => m !== "cli.ts" && m !== "types/");
}

describe("docs/dev/architecture.md's layer table", () => {
  const rows = tableRows(readFileSync(path.join(projectRoot, "docs/dev/architecture.md"), "utf8"));
  const edges = importEdges();

  it("has a row for every module of src/", () => {
    expect(modules().filter((m) => !rows.has(m))).toEqual([]);
  });

  it("lists exactly what each module imports (root modules being open to every folder)", () => {
    const wrong: string[] = [];
    for (const [module, listed] of rows) {
      const imported = [...(edges.get(module)?.entries() ?? [])].filter(([to]) => isRoot(module) || !isRoot(to));
      for (const [to, example] of imported) if (!listed.has(to)) wrong.push(`${module} imports ${to} (${example}), which its row does not list`);
      for (const to of listed) if (!imported.some(([t]) => t === to)) wrong.push(`${module}'s row lists ${to}, which it does not import`);
    }
    expect(wrong).toEqual([]);
  });

  // the one folder below the root modules: errors and logs are scrubbed with its redaction, so
  // errors.ts and logger.ts import it; it imports no folder, so no loop runs through them
  const belowRoots = "secrets/";

  it("has no root module importing a folder but secrets/", () => {
    const up = [...edges].flatMap(([from, out]) =>
      isRoot(from) ? [...out].filter(([to]) => !isRoot(to) && to !== belowRoots).map(([to, ex]) => `${from} -> ${to} (${ex})`) : [],
    );
    expect(up).toEqual([]);
  });

  it("has its leaf folders importing no folder", () => {
    const down = [...leafFolders].flatMap((leaf) =>
      [...(edges.get(leaf)?.entries() ?? [])].filter(([to]) => to.endsWith("/")).map(([to, ex]) => `${leaf} -> ${to} (${ex})`),
    );
    expect(down).toEqual([]);
  });

  it("has secrets/, which root modules import, importing no folder", () => {
    const down = [...(edges.get(belowRoots)?.entries() ?? [])].filter(([to]) => !isRoot(to)).map(([to, ex]) => `${belowRoots} -> ${to} (${ex})`);
    expect(down).toEqual([]);
  });
});
