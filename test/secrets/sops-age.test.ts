/**
 * The age layer alone: a data key encrypted by Debian's `age` (as `sops` does, armored) to an
 * identity made by `age-keygen`, unwrapped by gatesync through the `age-encryption` package.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { describe, expect, it } from "vitest";
import { unwrapDataKeys } from "../../src/secrets/sops/sops-age.js";
import type { AgeStanza } from "../../src/secrets/sops/sops-format.js";
import { SopsProblem } from "../../src/secrets/sops/sops-format.js";

function identity(): { secret: string; recipient: string } {
  const text = execFileSync("age-keygen", { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  const secret = text.split("\n").find((l) => l.startsWith("AGE-SECRET-KEY-1"))!;
  const recipient = /public key: (age1\S+)/.exec(text)![1]!;
  return { secret, recipient };
}

const encryptTo = (recipient: string, data: Buffer): string => execFileSync("age", ["-r", recipient, "-a"], { input: data, encoding: "utf8" });

/** One file's data key, as the run's lookups ask for it. */
const unwrapDataKey = (stanzas: AgeStanza[], otherKeyTypes: string[], identities: string[], sources: string): Buffer => {
  const [key] = unwrapDataKeys([{ stanzas, otherKeyTypes }], identities, sources);
  if (key instanceof SopsProblem) throw key;
  return key!;
};

const codeOf = (fn: () => unknown): string => {
  try {
    fn();
  } catch (error) {
    if (error instanceof SopsProblem) return `${error.code}: ${error.message}`;
    throw error;
  }
  return "no error";
};

describe("age data keys", () => {
  it("unwraps a data key age encrypted, with whichever of several identities is a recipient", () => {
    const [mine, other] = [identity(), identity()];
    const key = randomBytes(32);
    const stanzas = [{ recipient: mine.recipient, enc: encryptTo(mine.recipient, key) }];
    expect(unwrapDataKey(stanzas, [], [other.secret, mine.secret], "SOPS_AGE_KEY").equals(key)).toBe(true);
    expect(codeOf(() => unwrapDataKey(stanzas, [], [other.secret], "SOPS_AGE_KEY"))).toMatch(
      /^SOPS_WRONG_KEY: .*none of the age identities given is one of its recipients \(age1/,
    );
  });

  it("unwraps several files' keys in one request, each answered on its own (a wrong one among them refused alone)", () => {
    const [mine, other] = [identity(), identity()];
    const keys = [randomBytes(32), randomBytes(32)];
    const got = unwrapDataKeys(
      [
        { stanzas: [{ recipient: mine.recipient, enc: encryptTo(mine.recipient, keys[0]!) }], otherKeyTypes: [] },
        { stanzas: [{ recipient: other.recipient, enc: encryptTo(other.recipient, randomBytes(32)) }], otherKeyTypes: [] },
        { stanzas: [], otherKeyTypes: ["kms"] },
        { stanzas: [{ recipient: mine.recipient, enc: encryptTo(mine.recipient, keys[1]!) }], otherKeyTypes: [] },
      ],
      [mine.secret],
      "SOPS_AGE_KEY",
    );
    expect(got.map((k) => (k instanceof SopsProblem ? k.code : k.equals(keys[0]!) ? "first" : k.equals(keys[1]!) ? "second" : "other"))).toEqual([
      "first",
      "SOPS_WRONG_KEY",
      "SOPS_KEY_UNSUPPORTED",
      "second",
    ]);
  });

  it("refuses a payload that is not a data key, a stanza that is not armored, a line that is not an identity", () => {
    const mine = identity();
    expect(
      codeOf(() => unwrapDataKey([{ recipient: mine.recipient, enc: encryptTo(mine.recipient, randomBytes(16)) }], [], [mine.secret], "SOPS_AGE_KEY")),
    ).toMatch(/^SOPS_INVALID: .*not 32 bytes/);
    expect(
      codeOf(() => unwrapDataKey([{ recipient: mine.recipient, enc: "-----BEGIN AGE ENCRYPTED FILE-----\nnope\n" }], [], [mine.secret], "SOPS_AGE_KEY")),
    ).toMatch(/^SOPS_INVALID/);
    const enc = encryptTo(mine.recipient, randomBytes(32));
    expect(codeOf(() => unwrapDataKey([{ recipient: mine.recipient, enc }], [], ["AGE-SECRET-KEY-1NOTAKEY"], "SOPS_AGE_KEY"))).toMatch(
      /^SOPS_WRONG_KEY: .*not a valid AGE-SECRET-KEY-1/,
    );
    expect(codeOf(() => unwrapDataKey([{ recipient: mine.recipient, enc }], [], [], "SOPS_AGE_KEY"))).toMatch(/^SOPS_NO_IDENTITY/);
    expect(codeOf(() => unwrapDataKey([], ["pgp", "kms"], [mine.secret], "SOPS_AGE_KEY"))).toMatch(/^SOPS_KEY_UNSUPPORTED: .*pgp, kms/);
  });
});
