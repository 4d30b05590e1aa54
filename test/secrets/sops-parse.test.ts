/**
 * Reading a SOPS file's text (sops-tree.ts parseSopsFile): the value-only parse answers where it
 * is sure, `yaml` everywhere else, and either gives the tree in the order the file wrote it (the
 * MAC covers the order) — an integer key included, which a JavaScript object would list first.
 * Decrypting the sops-written fixtures through the same parse is sops-files.test.ts.
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { oneDocumentFast } from "../../src/load/fast-yaml.js";
import { SopsProblem } from "../../src/secrets/sops/sops-format.js";
import { leavesOf, parseSopsFile } from "../../src/secrets/sops/sops-tree.js";
import type { SopsFile } from "../../src/secrets/sops/sops-tree.js";

const fixtures = path.resolve(import.meta.dirname, "../fixtures/sops");

/** A sops block encrypting nothing (so no value is a plaintext finding); the MAC is not checked here. */
const metadata = {
  lastmodified: "2025-08-06T18:55:05Z",
  mac: "ENC[AES256_GCM,data:AA==,iv:AA==,tag:AAAAAAAAAAAAAAAAAAAAAA==,type:str]",
  encrypted_regex: "^never$",
};
const yamlOf = (body: string): string =>
  `${body}sops:\n  lastmodified: "${metadata.lastmodified}"\n  mac: ${metadata.mac}\n  encrypted_regex: ${metadata.encrypted_regex}\n`;

/** The file as both parses read it: the value-only one (where it answers) and `yaml`'s must agree. */
function parsed(text: string): SopsFile {
  const fast = parseSopsFile(text, oneDocumentFast);
  const full = parseSopsFile(text);
  // the selectors are compiled tests (functions): compared by the keys they are given
  const plain = (f: SopsFile): unknown => ({
    ...f,
    meta: { ...f.meta, encryptedRegex: f.meta.encryptedRegex?.("a"), unencryptedRegex: f.meta.unencryptedRegex?.("a") },
  });
  expect(plain(fast)).toEqual(plain(full));
  return fast;
}

const keysOf = (text: string): string[] => leavesOf(parsed(text).tree).map((l) => l.path.join("."));

const refused = (text: string): string => {
  const codes = [oneDocumentFast, undefined].map((fast) => {
    try {
      parseSopsFile(text, fast);
    } catch (error) {
      if (error instanceof SopsProblem) return error.code;
      throw error;
    }
    return "read";
  });
  expect(codes[0]).toBe(codes[1]);
  return codes[0]!;
};

describe("a SOPS file's text read into its tree", () => {
  it("keeps the file's order, integer keys included, in YAML and in JSON", () => {
    expect(keysOf(yamlOf('b: one\n"1": two\na:\n  "20": three\n  c: four\n'))).toEqual(["b", "1", "a.20", "a.c"]);
    const json = `{"b": "one", "1": "two", "a": {"20": "three", "c": "four"}, "sops": ${JSON.stringify(metadata)}}`;
    expect(keysOf(json)).toEqual(["b", "1", "a.20", "a.c"]);
  });

  it("refuses a key that is no string, as yaml reads it, whichever parse would have answered", () => {
    expect(refused(yamlOf("1.5: one\n"))).toBe("SOPS_INVALID");
    expect(refused(yamlOf("true: one\n"))).toBe("SOPS_INVALID");
    expect(refused(yamlOf('"true": one\n"1.5": two\n'))).toBe("read");
  });

  it("gives the sops-written fixtures' values in their order, with their metadata", () => {
    const yaml = parsed(readFileSync(path.join(fixtures, "example.age.yaml"), "utf8"));
    const json = parsed(readFileSync(path.join(fixtures, "example.age.json"), "utf8"));
    for (const other of ["token.enc.json", "message.enc.yaml"]) parsed(readFileSync(path.join(fixtures, other), "utf8"));
    expect(leavesOf(yaml.tree).map((l) => l.path.join("."))).toEqual([
      "myapp1",
      "app2.db.user",
      "app2.db.password",
      "app2.key",
      "number",
      "an_array.0",
      "an_array.1",
      "an_array.2",
      "an_array.3",
      "somebooleans.0",
      "somebooleans.1",
      "this.is.a.nested.value",
      "somelist_unencrypted.0",
      "somelist_unencrypted.1",
      "somelist_unencrypted.2",
      "nested_unencrypted.this.is.all",
    ]);
    expect(yaml.meta.age).toHaveLength(1);
    expect(json.meta.unencryptedSuffix).toBe("_unencrypted");
    expect(leavesOf(json.tree).length).toBeGreaterThan(0);
  });
});
