/**
 * The X25519 unwrap gatesync does with node:crypto (age-x25519.ts) against files Debian's `age`
 * wrote: the same answers as the `age-encryption` package (age-unwrap.ts), payloads across the
 * 64 KiB chunks of age's STREAM, several recipients, tampered files refused, and identities of
 * another type left to the package.
 */
import { execFileSync } from "node:child_process";
import { randomBytes } from "node:crypto";
import { generateHybridIdentity } from "age-encryption";
import { describe, expect, it } from "vitest";
import { unwrapAll } from "../../src/secrets/sops/age-unwrap.js";
import type { UnwrapAnswer } from "../../src/secrets/sops/age-unwrap.js";
import { unwrapX25519 } from "../../src/secrets/sops/age-x25519.js";
import { unwrapDataKeysHere } from "../../src/secrets/sops/sops-age.js";

function identity(): { secret: string; recipient: string } {
  const text = execFileSync("age-keygen", { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return { secret: text.split("\n").find((l) => l.startsWith("AGE-SECRET-KEY-1"))!, recipient: /public key: (age1\S+)/.exec(text)![1]! };
}

const encryptTo = (recipients: string[], data: Buffer): string =>
  execFileSync("age", [...recipients.flatMap((r) => ["-r", r]), "-a"], { input: data, encoding: "utf8", maxBuffer: 1 << 24 });

/** An answer as the tests compare it: the payload's hex, or the reason. */
const shown = (a: UnwrapAnswer): string => (a.ok ? Buffer.from(a.key).toString("hex") : a.reason);

/** Both implementations' answers to one request: they must agree. */
async function both(files: string[][], identities: string[]): Promise<string[]> {
  const here = unwrapX25519({ files, identities });
  expect(here).toBeDefined();
  const library = await unwrapAll({ files, identities });
  expect(here!.map(shown)).toEqual(library.map(shown));
  return here!.map(shown);
}

/** `enc` with the byte at `at` of its armored body changed (re-armored as age would). */
function flipped(enc: string, at: number): string {
  const lines = enc.trim().split("\n");
  const bytes = Buffer.from(lines.slice(1, -1).join(""), "base64");
  bytes.writeUInt8(bytes.readUInt8(at) ^ 0x01, at);
  const body = bytes.toString("base64").match(/.{1,64}/g)!;
  return [lines[0], ...body, lines.at(-1), ""].join("\n");
}

describe("X25519 data keys unwrapped with node:crypto", () => {
  it("opens what age wrote, whatever the payload's size, as age-encryption does", async () => {
    const mine = identity();
    const payloads = [32, 1, 64 * 1024, 64 * 1024 + 1, 3 * 64 * 1024 + 17].map((n) => randomBytes(n));
    const got = await both(
      payloads.map((p) => [encryptTo([mine.recipient], p)]),
      [mine.secret],
    );
    expect(got).toEqual(payloads.map((p) => p.toString("hex")));
  });

  it("opens a file for several recipients with either identity, and with neither says no match", async () => {
    const [a, b, c] = [identity(), identity(), identity()];
    const key = randomBytes(32);
    const enc = encryptTo([a.recipient, b.recipient], key);
    expect(await both([[enc]], [c.secret, b.secret])).toEqual([key.toString("hex")]);
    expect(await both([[enc]], [a.secret])).toEqual([key.toString("hex")]);
    expect(await both([[enc]], [c.secret])).toEqual(["no-match"]);
    // a second stanza of the file (another armored age file) is tried when the first fails
    expect(await both([[encryptTo([c.recipient], randomBytes(32)), enc]], [a.secret])).toEqual([key.toString("hex")]);
  });

  it("refuses every byte changed in the header or the payload, and what is not armored", async () => {
    const mine = identity();
    const key = randomBytes(32);
    const enc = encryptTo([mine.recipient], key);
    const size = Buffer.from(enc.trim().split("\n").slice(1, -1).join(""), "base64").length;
    for (let at = 0; at < size; at++) {
      const [answer] = unwrapX25519({ files: [[flipped(enc, at)]], identities: [mine.secret] })!;
      expect(answer!.ok, `byte ${at} changed`).toBe(false);
    }
    // armored but no age header: refused as not an age file (age-encryption says "no match")
    expect(
      unwrapX25519({ files: [["-----BEGIN AGE ENCRYPTED FILE-----\nnope\n-----END AGE ENCRYPTED FILE-----\n"]], identities: [mine.secret] })!.map(shown),
    ).toEqual(["malformed"]);
    expect(await both([[enc.replace("-----END AGE ENCRYPTED FILE-----", "")]], [mine.secret])).toEqual(["malformed"]);
  });

  it("says an identity line that is no valid key is one (a changed character, lower case)", async () => {
    const mine = identity();
    const enc = encryptTo([mine.recipient], randomBytes(32));
    const last = mine.secret.at(-1) === "Q" ? "P" : "Q";
    for (const bad of [mine.secret.slice(0, -1) + last, mine.secret.toLowerCase().replace("age-secret-key-1", "AGE-SECRET-KEY-1")]) {
      expect(await both([[enc]], [bad])).toEqual(["bad-identity"]);
    }
  });

  it("leaves an identity of another type to age-encryption, which still opens an X25519 file beside it", async () => {
    const mine = identity();
    const key = randomBytes(32);
    const identities = [await generateHybridIdentity(), mine.secret];
    expect(unwrapX25519({ files: [[encryptTo([mine.recipient], key)]], identities })).toBeUndefined();
    const [got] = await unwrapDataKeysHere(
      [{ stanzas: [{ recipient: mine.recipient, enc: encryptTo([mine.recipient], key) }], otherKeyTypes: [] }],
      identities,
      "SOPS_AGE_KEY",
    );
    expect(Buffer.isBuffer(got) && got.equals(key)).toBe(true);
  });
});
