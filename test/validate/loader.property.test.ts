/**
 * Property tests of the loader and validator: whatever bytes or mutated resources a
 * repository holds, validation returns (never throws, never hangs), every error is located
 * in a file that exists, at a position inside that file, and invalid resources are not returned.
 */
import { readFile, rm, writeFile } from "node:fs/promises";
import path from "node:path";
import fc from "fast-check";
import { stringify } from "yaml";
import { afterAll, describe, expect, it } from "vitest";
import { RepositoryValidator } from "../../src/validate/repository/repository-validator.js";
import { parseYaml } from "../../src/load/yaml-reader.js";
import { projectRoot, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const validator = new RepositoryValidator();
afterAll(removeTempRepos);

const runs = Number(process.env.GATESYNC_FUZZ_RUNS ?? 60);

function assertLocated(
  diagnostics: ReadonlyArray<{ file?: string | undefined; line?: number | undefined; column?: number | undefined; severity: string }>,
  texts: Record<string, string>,
): void {
  for (const d of diagnostics) {
    expect(d.file, JSON.stringify(d)).toBeDefined();
    const text = texts[d.file!];
    if (text === undefined || d.line === undefined) continue;
    const lines = text.split(/\r?\n/);
    expect(d.line).toBeGreaterThanOrEqual(1);
    expect(d.line).toBeLessThanOrEqual(lines.length);
    expect(d.column ?? 1).toBeGreaterThanOrEqual(1);
  }
}

describe("loader properties", () => {
  it("parses arbitrary text without throwing, locating every problem", () => {
    const yamlish = fc.stringMatching(/^[\w\s:\-[\]{},&*!|>'"#%@`?.\n]*$/, { maxLength: 400 });
    fc.assert(
      fc.property(fc.oneof(fc.string({ maxLength: 300 }), yamlish), (text) => {
        const result = parseYaml(text, "f.yaml");
        for (const d of result.diagnostics) {
          expect(d.file).toBe("f.yaml");
          if (d.line !== undefined) expect(d.line).toBeLessThanOrEqual(text.split(/\r?\n/).length + 1);
        }
      }),
      { numRuns: runs * 10 },
    );
  });

  it("validates mutated example resources without throwing, and never returns an invalid resource", async () => {
    const source = await readFile(path.join(projectRoot, "examples/config/gateway/org-keys.yaml"), "utf8");
    const docs = source.split(/^---$/m).map((d) => parseYaml(d, "x").documents[0]!.value as Record<string, unknown>);
    const dir = await tempRepo();
    const junk = fc.oneof(
      fc.string({ maxLength: 8 }),
      fc.integer(),
      fc.double(),
      fc.boolean(),
      fc.constant(null),
      fc.array(fc.integer(), { maxLength: 3 }),
      fc.dictionary(fc.string({ maxLength: 5 }), fc.integer(), { maxKeys: 2 }),
    );
    const mutation = fc.record({
      doc: fc.nat(docs.length - 1),
      pathPick: fc.array(fc.nat(40), { minLength: 1, maxLength: 4 }),
      op: fc.constantFrom("delete", "replace", "add"),
      value: junk,
      key: fc.string({ minLength: 1, maxLength: 10 }),
    });

    await fc.assert(
      fc.asyncProperty(fc.array(mutation, { minLength: 1, maxLength: 4 }), async (mutations) => {
        const copies = docs.map((d) => structuredClone(d));
        for (const m of mutations) mutate(copies[m.doc]!, m.pathPick, m.op, m.value, m.key);
        const text = copies.map((d) => stringify(d)).join("---\n");
        await writeFile(path.join(dir, "keys.yaml"), text);
        const result = await validator.validate({ root: dir });
        assertLocated(result.diagnostics, { "keys.yaml": text });
        const invalid = new Set(result.diagnostics.filter((d) => d.severity === "error").map((d) => d.resource));
        for (const r of result.resources) expect(invalid.has(`${r.kind}/${r.name}`)).toBe(false);
      }),
      { numRuns: runs },
    );
    await rm(path.join(dir, "keys.yaml"));
  });

  it("validates random bytes written as resource files without throwing", async () => {
    const dir = await tempRepo();
    await fc.assert(
      fc.asyncProperty(fc.uint8Array({ maxLength: 512 }), fc.string({ maxLength: 200 }), async (bytes, text) => {
        await writeFile(path.join(dir, "a.yaml"), bytes);
        await writeFile(path.join(dir, "b.yml"), text);
        const result = await validator.validate({ root: dir });
        assertLocated(result.diagnostics, { "b.yml": text });
      }),
      { numRuns: runs },
    );
  });
});

/** Deletes, replaces or adds a value somewhere in a nested object, chosen by indexes. */
function mutate(root: Record<string, unknown>, picks: number[], op: string, value: unknown, key: string): void {
  let node: unknown = root;
  for (let i = 0; i < picks.length; i++) {
    if (node === null || typeof node !== "object") return;
    const keys = Object.keys(node);
    if (keys.length === 0) break;
    const k = keys[picks[i]! % keys.length]!;
    const child = (node as Record<string, unknown>)[k];
    const last = i === picks.length - 1 || child === null || typeof child !== "object";
    if (last) {
      const target = node as Record<string, unknown>;
      if (op === "delete") delete target[k];
      else if (op === "replace") target[k] = value;
      else target[key] = value;
      return;
    }
    node = child;
  }
}
