/**
 * docs/dev/layout.md is the door to the tree: one row per folder of src/. A folder added without
 * its row, or a row naming a folder that is gone, fails here with its name.
 */
import { readdirSync, readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../helpers/temp-repo.js";

const topFolders = (): string[] =>
  readdirSync(path.join(projectRoot, "src"), { withFileTypes: true })
    .filter((e) => e.isDirectory() && e.name !== "types")
    .map((e) => `src/${e.name}/`);

/** The folders the table's first column names. */
function rows(): string[] {
  const doc = readFileSync(path.join(projectRoot, "docs/dev/layout.md"), "utf8");
  return doc.split("\n").flatMap((line) => [...(/^\| `(src\/[a-z-]+\/)`/.exec(line) ?? [])].slice(1));
}

describe("docs/dev/layout.md", () => {
  it("has a row for every folder of src/, and none for a folder that is gone", () => {
    const listed = rows();
    expect(topFolders().filter((f) => !listed.includes(f))).toEqual([]);
    expect(listed.filter((f) => !topFolders().includes(f))).toEqual([]);
    expect(listed.length).toBeGreaterThan(15);
  });
});
