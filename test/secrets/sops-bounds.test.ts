/**
 * A SOPS file's list of age recipients is outside its MAC: a committer with no key can add junk
 * stanzas, each an X25519 trial per identity. Bounded before any unwrap (docs/user/secrets.md#bounds):
 * bytes and recipients per file (SOPS_TOO_LARGE), trials per run (SOPS_UNWRAP_BUDGET), each
 * refusal naming the file and the bound; a file within them still decrypts. Junk stanzas are
 * real age stanzas, written by Debian's `age` for a recipient that is not ours.
 */
import { execFileSync } from "node:child_process";
import { mkdtempSync, readFileSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import path from "node:path";
import { describe, expect, it } from "vitest";
import { EnvFileSecretSource } from "../../src/secrets/env-file-source.js";
import { sopsBounds } from "../../src/secrets/sops/sops-source.js";

const fixtures = path.resolve(import.meta.dirname, "../fixtures/sops");
const key = readFileSync(path.join(fixtures, "keys.txt"), "utf8");
const token = JSON.parse(readFileSync(path.join(fixtures, "token.enc.json"), "utf8")) as { sops: { age: unknown[] } };

/** A real age stanza for a recipient we hold no identity of (`age-keygen`, then `age -r`). */
function junkStanza(): { recipient: string; enc: string } {
  const identity = execFileSync("age-keygen", { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  const recipient = /public key: (age1\S+)/.exec(identity)?.[1] ?? execFileSync("age-keygen", ["-y"], { input: identity, encoding: "utf8" }).trim();
  const enc = execFileSync("age", ["-a", "-r", recipient], { input: Buffer.alloc(32, 7), encoding: "utf8" });
  return { recipient, enc };
}

/** token.enc.json with `junk` stanzas added after its own, as `names` in a fresh directory. */
function withJunk(junk: number, names: readonly string[]): string {
  const dir = mkdtempSync(path.join(tmpdir(), "gatesync-sops-bounds-"));
  const stanza = junkStanza();
  const file = { ...token, sops: { ...token.sops, age: [...token.sops.age, ...Array.from({ length: junk }, () => stanza)] } };
  for (const name of names) writeFileSync(path.join(dir, name), JSON.stringify(file, null, 1));
  return dir;
}

describe("SOPS files bounded before any unwrap", () => {
  it("a file of 36,000 junk stanzas is refused by its bytes, one of 65 by its recipients, each naming the file and the bound; 63 junk stanzas still decrypt", () => {
    const dir = withJunk(36_000, ["huge.enc.json"]);
    const source = new EnvFileSecretSource({ HOME: dir, SOPS_AGE_KEY: key }, dir);
    expect(source.lookup({ provider: "sops", name: "huge.enc.json" })).toMatchObject({
      ok: false,
      code: "SOPS_TOO_LARGE",
      message: expect.stringMatching(/^huge\.enc\.json: the file is \d+ bytes, past the bound of 1048576 bytes of a SOPS file/) as unknown,
    });
    const many = withJunk(sopsBounds.maxStanzas, ["many.enc.json"]);
    expect(new EnvFileSecretSource({ HOME: many, SOPS_AGE_KEY: key }, many).lookup({ provider: "sops", name: "many.enc.json" })).toMatchObject({
      ok: false,
      code: "SOPS_TOO_LARGE",
      message: "many.enc.json: the file names 65 age recipients, past the bound of 64 of a SOPS file (sopsBounds.maxStanzas)",
    });
    const fine = withJunk(sopsBounds.maxStanzas - 1, ["fine.enc.json"]);
    expect(new EnvFileSecretSource({ HOME: fine, SOPS_AGE_KEY: key }, fine).lookup({ provider: "sops", name: "fine.enc.json" })).toMatchObject({
      ok: true,
      value: "t00m4nys3cr3tz",
    });
  });

  it("a run's trials are bounded: the files past 4,096 are refused before any is unwrapped, those before it decrypt, in the prefetch and the lookups alike", async () => {
    // 64 stanzas (1 real + 63 junk) per file, one identity: 64 files fit the run's 4,096 trials, the 65th does not
    const names = Array.from({ length: 66 }, (_, i) => `f${String(i).padStart(2, "0")}.enc.json`);
    const dir = withJunk(sopsBounds.maxStanzas - 1, names);
    const source = new EnvFileSecretSource({ HOME: dir, SOPS_AGE_KEY: key }, dir);
    await source.prefetch(names.map((name) => ({ provider: "sops" as const, name })));
    const answers = names.map((name) => source.lookup({ provider: "sops", name }));
    expect(answers.slice(0, 64).every((a) => a.ok)).toBe(true);
    for (const [i, a] of answers.slice(64).entries()) {
      expect(a).toMatchObject({
        ok: false,
        code: "SOPS_UNWRAP_BUDGET",
        message: expect.stringContaining(
          `${names[64 + i]!}: unwrapping its data key (64 age stanza(s) × 1 identity) is past this run's bound of 4096 trials`,
        ) as unknown,
      });
    }
  });
});
