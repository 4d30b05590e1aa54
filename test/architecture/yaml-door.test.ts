/**
 * One YAML door: only src/yaml/ imports the `yaml` and `js-yaml` packages (type imports, dynamic
 * imports and requires included), so the lazy loading and the bundle's replacement of `yaml`
 * (scripts/bundle/bundle.ts) have one module to watch, and a second dialect cannot creep in.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { handWrittenFiles, projectRoot } from "./source-files.js";

const door = "src/yaml/";

/** A module specifier `yaml` or `js-yaml` after `from`, `import`, `import(`, `require(` or a created require's `)(`. */
const yamlSpecifier = /(?:\bfrom|\bimport|\brequire\s*\(|\bimport\s*\(|\)\s*\()\s*["'](yaml|js-yaml)["']/g;

function yamlImports(text: string): string[] {
  return [...text.matchAll(yamlSpecifier)].map((m) => m[1] ?? "");
}

describe("the YAML door", () => {
  it("recognises every form an import of the packages takes", () => {
    const forms = [
      'import { parse } from "yaml";',
      "import type { Node } from 'yaml';",
      'import type * as Y from "yaml";',
      'export { load } from "js-yaml";',
      'import "js-yaml";',
      'const y = await import("yaml");',
      'const y = require("js-yaml");',
      'createRequire(import.meta.url)("yaml")',
    ];
    expect(forms.map((f) => yamlImports(f).length)).toEqual(forms.map(() => 1));
    expect(yamlImports('import { x } from "../yaml/yaml-library.js"; const s = "yaml";')).toEqual([]);
  });

  it("is the only folder of src/ importing yaml or js-yaml", () => {
    const outside = handWrittenFiles(["src"])
      .filter((file) => !file.startsWith(door))
      .flatMap((file) => yamlImports(readFileSync(path.join(projectRoot, file), "utf8")).map((pkg) => `${file} imports ${pkg}`));
    expect(outside).toEqual([]);
  });

  it("imports the packages itself (the door is where they are reached)", () => {
    const inside = handWrittenFiles(["src"])
      .filter((file) => file.startsWith(door))
      .flatMap((file) => yamlImports(readFileSync(path.join(projectRoot, file), "utf8")));
    expect(new Set(inside)).toEqual(new Set(["yaml", "js-yaml"]));
  });
});
