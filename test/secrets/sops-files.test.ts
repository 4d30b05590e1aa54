/**
 * `${sops:PATH#KEY.PATH}` against files written by the real `sops` tool (getsops/sops's own
 * example.yaml and example.json, test/fixtures/sops/README.md), their data key wrapped for the
 * SOPS project's test age recipient with Debian's `age`: decrypted, verified, or refused with a
 * located reason — never a partial value.
 */
import { cpSync, mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EnvFileSecretSource } from "../../src/secrets/env-file-source.js";
import type { SecretLookup } from "../../src/secrets/resolver.js";
import { secretScope } from "../../src/secrets/scope.js";

const fixtures = path.resolve(import.meta.dirname, "../fixtures/sops");
const key = readFileSync(path.join(fixtures, "keys.txt"), "utf8");
const otherKey = readFileSync(path.join(fixtures, "other-keys.txt"), "utf8");

function root(edit?: (yaml: string) => string): string {
  const dir = mkdtempSync(path.join(tmpdir(), "gatesync-sops-"));
  cpSync(fixtures, dir, { recursive: true });
  if (edit !== undefined) writeFileSync(path.join(dir, "example.age.yaml"), edit(readFileSync(path.join(dir, "example.age.yaml"), "utf8")));
  return dir;
}

const lookup = (dir: string, name: string, env: Record<string, string> = { SOPS_AGE_KEY: key }): SecretLookup =>
  new EnvFileSecretSource({ HOME: dir, ...env }, dir).lookup({ provider: "sops", name });

/** A failure's code and message: never the value. */
const refusal = (got: SecretLookup): { code: string | undefined; message: string } => {
  if (got.ok) throw new Error("the reference resolved");
  return { code: "code" in got ? got.code : undefined, message: got.message };
};

describe("${sops:} of files written by sops", () => {
  it("reads one value of a YAML and of a JSON file, MAC verified, by key path", () => {
    const dir = root();
    expect(lookup(dir, "example.age.yaml#app2.db.password")).toMatchObject({ ok: true, value: "c4r1b0u" });
    expect(lookup(dir, "example.age.yaml#an_array.1")).toMatchObject({ ok: true, value: "secretuser2" });
    expect(lookup(dir, "example.age.yaml#nested_unencrypted.this.is.all")).toMatchObject({ ok: true, value: "going to remain in clear text" });
    expect(lookup(dir, "example.age.json#address.city")).toMatchObject({ ok: true, value: "New York" });
    expect(lookup(dir, "example.age.json#phoneNumbers.1.type")).toMatchObject({ ok: true });
  });

  it("reads the identity from SOPS_AGE_KEY_FILE, and from ~/.config/sops/age/keys.txt by default", () => {
    const dir = root();
    expect(lookup(dir, "example.age.yaml#myapp1", { SOPS_AGE_KEY_FILE: path.join(dir, "keys.txt") })).toMatchObject({
      ok: true,
      value: "t00m4nys3cr3tzupdated",
    });
    cpSync(path.join(dir, "keys.txt"), path.join(dir, ".config/sops/age/keys.txt"));
    expect(lookup(dir, "example.age.yaml#myapp1", {})).toMatchObject({ ok: true, value: "t00m4nys3cr3tzupdated" });
    // several identities: the one that is a recipient opens the file
    expect(lookup(dir, "example.age.yaml#myapp1", { SOPS_AGE_KEY: `${otherKey}\n${key}` })).toMatchObject({ ok: true });
  });

  const data = (yaml: string): string => yaml.replace(/(password: ENC\[AES256_GCM,data:)(.)/, (_m, a: string, c: string) => a + (c === "A" ? "B" : "A"));
  const tampered: Array<[string, (yaml: string) => string]> = [
    ["a byte of a value's data", data],
    ["a byte of a value's iv", (y) => y.replace(/(iv:aao0OSVdFwaB9EGZ0O\+Wn5bRJ6do7hgiQioq)i/, "$1j")],
    ["a byte of a value's tag", (y) => y.replace(/tag:WKj0/, "tag:WKj1")],
    ["a byte of the MAC", (y) => y.replace(/(mac: ENC\[AES256_GCM,data:)G/, "$1H")],
    ["two values swapped in order", (y) => y.replace(/( {8}user: .*\n)( {8}password: .*\n)/, "$2$1")],
    ["a value moved to another key path", (y) => y.replace(/( {8})user: (.*)\n( {8})password: (.*)\n/, "$1user: $4\n$3password: $2\n")],
    ["an unencrypted value changed", (y) => y.replace("remain in clear text", "remain in plain text")],
  ];
  for (const [what, edit] of tampered) {
    it(`refuses the whole file when ${what} changed after encryption`, () => {
      const dir = root(edit);
      const got = refusal(lookup(dir, "example.age.yaml#myapp1"));
      expect(got.code).toBe("SOPS_INTEGRITY");
      expect(got.message).toContain("example.age.yaml");
      expect(got.message).not.toContain("t00m4nys3cr3tzupdated");
    });
  }

  it("refuses a truncated ENC[…] value and a plaintext value its selectors say is encrypted, without any identity too", () => {
    const truncated = root((y) => y.replace(/(password: ENC\[AES256_GCM,data:8Ll\+TDCgzQ==,iv:).*/, "$1aao0OSVd"));
    const plaintext = root((y) => y.replace(/password: ENC\[.*/, "password: hunter2hunter2"));
    for (const dir of [truncated, plaintext]) {
      for (const env of [{ SOPS_AGE_KEY: key }, {}]) {
        expect(refusal(lookup(dir, "example.age.yaml#myapp1", env))).toEqual({
          code: "SOPS_INVALID",
          message: expect.stringContaining("app2.db.password") as unknown,
        });
      }
    }
    expect(refusal(lookup(plaintext, "example.age.yaml#myapp1")).message).not.toContain("hunter2hunter2");
  });

  it("says a wrong key and a missing identity, naming the recipients and never a key", () => {
    const dir = root();
    const wrong = refusal(lookup(dir, "example.age.yaml#myapp1", { SOPS_AGE_KEY: otherKey }));
    expect(wrong.code).toBe("SOPS_WRONG_KEY");
    expect(wrong.message).toContain("age1lzd99uklcjnc0e7d860axevet2cz99ce9pq6tzuzd05l5nr28ams36nvun");
    expect(wrong.message).not.toContain("AGE-SECRET-KEY");
    const none = lookup(dir, "example.age.yaml#myapp1", {});
    expect(none).toMatchObject({ ok: false, reason: "missing", code: "SOPS_NO_IDENTITY" });
  });

  it("checks the key path without any identity (keys are plaintext in a SOPS file)", () => {
    const dir = root();
    expect(refusal(lookup(dir, "example.age.yaml#app2.db.pasword", {}))).toMatchObject({ code: "SOPS_KEY_PATH" });
    expect(refusal(lookup(dir, "example.age.yaml#app2.db", {}))).toMatchObject({ code: "SOPS_KEY_PATH" });
    expect(refusal(lookup(dir, "example.age.yaml", {}))).toEqual({ code: "SOPS_KEY_PATH", message: expect.stringContaining("#KEY.PATH") as unknown });
  });

  it("refuses a file encrypted for PGP only, and a file without sops metadata", () => {
    const dir = root();
    expect(refusal(lookup(dir, "example.yaml#myapp1"))).toEqual({ code: "SOPS_KEY_UNSUPPORTED", message: expect.stringContaining("pgp") as unknown });
    writeFileSync(path.join(dir, "plain.yaml"), "password: hunter2hunter2\n");
    expect(refusal(lookup(dir, "plain.yaml#password"))).toMatchObject({ code: "SOPS_INVALID" });
  });

  it("refuses the worst files a commit can hold, before reading or decrypting them: too large, an alias bomb, nested past 128 levels, keys that are not strings", () => {
    const dir = root();
    const sopsBlock = "sops:\n  mac: x\n  lastmodified: '2026-01-01T00:00:00Z'\n  age: []\n";
    const cases: Record<string, readonly [text: string, why: string, code?: string]> = {
      "large.yaml": [`${sopsBlock}pad: "${"x".repeat(2 * 1024 * 1024)}"\n`, "past the bound of 1048576 bytes", "SOPS_TOO_LARGE"],
      "aliases.yaml": [
        `${sopsBlock}a: &a [x, x, x, x, x, x, x, x, x]\nb: &b [*a, *a, *a, *a, *a, *a, *a, *a, *a]\nc: [*b, *b, *b, *b, *b, *b, *b, *b, *b]\n`,
        "alias",
      ],
      "deep.yaml": [`${sopsBlock}deep: ${"[".repeat(200)}${"]".repeat(200)}\n`, "nested too deeply"],
      "keys.yaml": [`${sopsBlock}? [not, a, string]\n: x\n`, "not a string"],
    };
    for (const [file, [text, why, code = "SOPS_INVALID"]] of Object.entries(cases)) {
      writeFileSync(path.join(dir, file), text);
      expect(refusal(lookup(dir, `${file}#pad`)), file).toEqual({ code, message: expect.stringContaining(why) as unknown });
    }
  });

  it("finds the file exactly as ${file:} does: it may not leave the secrets directory", () => {
    const dir = root();
    const got = new EnvFileSecretSource({ SOPS_AGE_KEY: key }, path.join(dir, ".config")).lookup({ provider: "sops", name: "../example.age.yaml#myapp1" });
    expect(got).toMatchObject({ ok: false, reason: "escape" });
  });

  it("never lets a resource read the age identities through ${env:}", () => {
    const scope = secretScope({ env: ["SOPS_AGE_KEY"], envPrefix: "SOPS_", reservedVariables: [], reservedFiles: [] });
    const got = new EnvFileSecretSource({ SOPS_AGE_KEY: key }, fixtures, scope).lookup({ provider: "env", name: "SOPS_AGE_KEY" });
    expect(got).toMatchObject({ ok: false, reason: "scope" });
  });
});
