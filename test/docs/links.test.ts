/**
 * Every relative link of the README and the docs names a file that exists: pages move between
 * docs/user and docs/dev, and a link a reader follows to nothing is a broken manual.
 */
import { existsSync, readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { projectRoot } from "../helpers/temp-repo.js";

function markdownFiles(dir: string): string[] {
  return readdirSync(dir, { withFileTypes: true }).flatMap((e) =>
    e.isDirectory() ? markdownFiles(path.join(dir, e.name)) : e.name.endsWith(".md") ? [path.join(dir, e.name)] : [],
  );
}

describe("the documentation's links", () => {
  it("all lead to files of the repository", () => {
    const pages = [path.join(projectRoot, "README.md"), ...markdownFiles(path.join(projectRoot, "docs"))];
    const broken = pages.flatMap((page) =>
      [...readFileSync(page, "utf8").matchAll(/\]\(([^)\s#]+)(#[^)\s]*)?\)/g)]
        .map((m) => m[1]!)
        .filter((target) => !/^[a-z]+:/.test(target) && !target.startsWith("/"))
        .filter((target) => !existsSync(path.resolve(path.dirname(page), target)))
        .map((target) => `${path.relative(projectRoot, page)}: ${target}`),
    );
    expect(pages.length).toBeGreaterThan(20);
    expect(broken).toEqual([]);
  });
});
