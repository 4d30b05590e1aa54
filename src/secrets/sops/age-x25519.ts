/**
 * Unwrapping SOPS data keys for X25519 identities (`AGE-SECRET-KEY-1…`, what `age-keygen` makes
 * and what nearly every SOPS user has) with node:crypto, synchronously: the age v1 format
 * (https://age-encryption.org/v1) read from the armored stanza, X25519, HKDF-SHA-256, the header
 * HMAC and ChaCha20-Poly1305 over the payload.
 *
 * Why not the `age-encryption` package here: loading it cost ~75 ms of CPU per process (its
 * post-quantum and NIST curves are built at import, WebCrypto loaded) and its unwrap ~4 ms per
 * file (a private key imported and its public key derived per call, web streams, pure-JS
 * ChaCha20), against a limit of 100 ms for 1,000 references across 50 files
 * (docs/dev/performance.md, bench/sops.ts). The package stays the implementation for every
 * other identity type (age-unwrap.ts): `unwrapX25519` answers only when every identity is an
 * X25519 one. Both are tested on files Debian's `age` wrote (test/secrets/sops-age.test.ts).
 */
import { createDecipheriv, createHmac, createPrivateKey, createPublicKey, diffieHellman, hkdfSync, timingSafeEqual } from "node:crypto";
import type { KeyObject } from "node:crypto";
import type { UnwrapAnswer, UnwrapRequest } from "./age-unwrap.js";

/** An X25519 identity: its private key and its public key (the recipient, part of the wrapping key's salt). */
interface X25519Identity {
  readonly privateKey: KeyObject;
  readonly publicKey: Buffer;
}

const bech32Charset = "qpzry9x8gf2tvdw0s3jn54khce6mua7l";

function bech32Polymod(values: readonly number[]): number {
  const generator = [0x3b6a57b2, 0x26508e6d, 0x1ea119fa, 0x3d4233dd, 0x2a1462b3];
  let chk = 1;
  for (const v of values) {
    const top = chk >>> 25;
    chk = ((chk & 0x1ffffff) << 5) ^ v;
    for (let i = 0; i < 5; i++) if ((top >>> i) & 1) chk ^= generator[i]!;
  }
  return chk;
}

/**
 * The 32 bytes of an `AGE-SECRET-KEY-1…` line (BIP 173 bech32, checksum verified), or undefined.
 * Hand-written: @scure/base, which age-encryption uses, cost ~20 ms to load for these 20 lines.
 */
function identityBytes(line: string): Buffer | undefined {
  if (line !== line.toUpperCase()) return undefined;
  const text = line.toLowerCase();
  const hrp = "age-secret-key-";
  if (!text.startsWith(`${hrp}1`)) return undefined;
  const data = [...text.slice(hrp.length + 1)].map((c) => bech32Charset.indexOf(c));
  if (data.length < 6 || data.some((v) => v < 0)) return undefined;
  const expanded = [...[...hrp].map((c) => c.charCodeAt(0) >> 5), 0, ...[...hrp].map((c) => c.charCodeAt(0) & 31)];
  if (bech32Polymod([...expanded, ...data]) !== 1) return undefined;
  let acc = 0;
  let bits = 0;
  const out: number[] = [];
  for (const v of data.slice(0, -6)) {
    acc = (acc << 5) | v;
    bits += 5;
    if (bits >= 8) out.push((acc >>> (bits -= 8)) & 0xff);
  }
  if (bits >= 5 || (acc & ((1 << bits) - 1)) !== 0 || out.length !== 32) return undefined;
  return Buffer.from(out);
}

/** RFC 8410 DER prefixes: node:crypto imports a raw X25519 key only inside these. */
const pkcs8Prefix = Buffer.from("302e020100300506032b656e04220420", "hex");
const spkiPrefix = Buffer.from("302a300506032b656e032100", "hex");

function parseIdentity(line: string): X25519Identity | undefined {
  const bytes = identityBytes(line);
  if (bytes === undefined) return undefined;
  const privateKey = createPrivateKey({ key: Buffer.concat([pkcs8Prefix, bytes]), format: "der", type: "pkcs8" });
  const spki = createPublicKey(privateKey).export({ format: "der", type: "spki" });
  return { privateKey, publicKey: spki.subarray(spki.length - 32) };
}

/** The identities of the last request (a run asks with the same ones for every file): parsed once. */
let last: { readonly lines: string; readonly parsed: X25519Identity[] | "bad-identity" } | undefined;

function identitiesOf(lines: readonly string[]): X25519Identity[] | "bad-identity" {
  const joined = lines.join("\n");
  if (last?.lines !== joined) {
    const parsed = lines.map(parseIdentity);
    last = { lines: joined, parsed: parsed.every((p) => p !== undefined) ? parsed : "bad-identity" };
  }
  return last.parsed;
}

/** Thrown for a stanza that is not an armored age file (SOPS_INVALID); anything else thrown is "no match". */
class Malformed extends Error {}

/** The stanzas one armored `enc` may hold (sops writes one): the trials it costs are bounded. */
const maxStanzasPerHeader = 4;

const armorBegin = "-----BEGIN AGE ENCRYPTED FILE-----";
const armorEnd = "-----END AGE ENCRYPTED FILE-----";

/** The armored file's bytes: the same strict subset of PEM age-encryption's armor.decode reads. */
function dearmor(text: string): Buffer {
  const lines = text.trim().replaceAll("\r\n", "\n").split("\n");
  if (lines.shift() !== armorBegin || lines.pop() !== armorEnd || lines.length === 0) throw new Malformed();
  const lengthOk = (l: string, i: number): boolean => (i === lines.length - 1 ? l.length > 0 && l.length <= 64 && l.length % 4 === 0 : l.length === 64);
  if (!lines.every((l, i) => lengthOk(l, i) && /^[A-Za-z0-9+/]+={0,2}$/.test(l))) throw new Malformed();
  return Buffer.from(lines.join(""), "base64");
}

/** Canonical unpadded base64 (the age header's), strictly: Buffer.from alone accepts anything. */
function base64NoPad(text: string): Buffer {
  const bytes = Buffer.from(text, "base64");
  if (!/^[A-Za-z0-9+/]*$/.test(text) || bytes.toString("base64").replace(/=+$/, "") !== text) throw new Malformed();
  return bytes;
}

interface Header {
  readonly stanzas: ReadonlyArray<{ readonly args: readonly string[]; readonly body: Buffer }>;
  /** The header up to and including `---`: what the header MAC covers. */
  readonly covered: Buffer;
  readonly mac: Buffer;
  readonly payload: Buffer;
}

function parseHeader(file: Buffer): Header {
  let at = 0;
  const line = (): string => {
    const end = file.indexOf(0x0a, at);
    if (end < 0) throw new Malformed();
    const text = file.toString("latin1", at, end);
    at = end + 1;
    return text;
  };
  if (line() !== "age-encryption.org/v1") throw new Malformed();
  const stanzas: Array<{ args: string[]; body: Buffer }> = [];
  for (;;) {
    // sops writes one stanza per recipient's `enc`: more is no sops file, and each costs an X25519 trial
    if (stanzas.length > maxStanzasPerHeader) throw new Malformed();
    const start = at;
    const next = line();
    if (next.startsWith("--- ")) {
      const mac = base64NoPad(next.slice(4));
      return { stanzas, covered: file.subarray(0, start + 3), mac, payload: file.subarray(at) };
    }
    const args = next.split(" ");
    if (args.shift() !== "->" || args.length === 0 || args.some((a) => a.length === 0)) throw new Malformed();
    const body: Buffer[] = [];
    for (let chunk = base64NoPad(line()); ; chunk = base64NoPad(line())) {
      if (chunk.length > 48) throw new Malformed();
      body.push(chunk);
      if (chunk.length < 48) break;
    }
    stanzas.push({ args, body: Buffer.concat(body) });
  }
}

const hkdf = (ikm: Buffer, salt: Buffer, info: string): Buffer => Buffer.from(hkdfSync("sha256", ikm, salt, info, 32));

function chachaOpen(key: Buffer, nonce: Buffer, sealed: Buffer): Buffer {
  if (sealed.length < 16) throw new Error("sealed box too short");
  const decipher = createDecipheriv("chacha20-poly1305", key, nonce, { authTagLength: 16 });
  decipher.setAuthTag(sealed.subarray(sealed.length - 16));
  return Buffer.concat([decipher.update(sealed.subarray(0, sealed.length - 16)), decipher.final()]);
}

/** The file key of an X25519 stanza for `identity` (age spec, "X25519 recipient stanza"); throws when it is not for it. */
function fileKeyOf(stanza: Header["stanzas"][number], identity: X25519Identity): Buffer {
  const share = base64NoPad(stanza.args[1] ?? "");
  if (stanza.args.length !== 2 || share.length !== 32 || stanza.body.length !== 32) throw new Malformed();
  const publicKey = createPublicKey({ key: Buffer.concat([spkiPrefix, share]), format: "der", type: "spki" });
  const shared = diffieHellman({ privateKey: identity.privateKey, publicKey });
  if (shared.every((b) => b === 0)) throw new Error("low-order share");
  const wrapKey = hkdf(shared, Buffer.concat([share, identity.publicKey]), "age-encryption.org/v1/X25519");
  return chachaOpen(wrapKey, Buffer.alloc(12), stanza.body);
}

/** The payload decrypted (age STREAM: 64 KiB chunks, a counter and a last-chunk flag as nonce). */
function openPayload(fileKey: Buffer, payload: Buffer): Buffer {
  if (payload.length < 16) throw new Malformed();
  const key = hkdf(fileKey, payload.subarray(0, 16), "payload");
  const sealed = payload.subarray(16);
  const chunk = 64 * 1024 + 16;
  const out: Buffer[] = [];
  for (let at = 0, counter = 0; at === 0 || at < sealed.length; at += chunk, counter++) {
    const last = sealed.length - at <= chunk;
    const nonce = Buffer.alloc(12);
    nonce.writeUIntBE(counter, 5, 6);
    nonce[11] = last ? 1 : 0;
    const plain = chachaOpen(key, nonce, sealed.subarray(at, at + chunk));
    if (last && plain.length === 0 && at > 0) throw new Error("empty last chunk");
    out.push(plain);
  }
  return Buffer.concat(out);
}

/** One armored stanza opened with the first identity it is for; throws when none is. */
function open(enc: string, identities: readonly X25519Identity[]): Buffer {
  const header = parseHeader(dearmor(enc));
  for (const stanza of header.stanzas.filter((s) => s.args[0] === "X25519")) {
    for (const identity of identities) {
      let fileKey: Buffer;
      try {
        fileKey = fileKeyOf(stanza, identity);
      } catch (error) {
        if (error instanceof Malformed) throw error;
        continue;
      }
      // once a stanza opened, a header or payload that fails is the file's fault, not a mismatch
      const mac = createHmac("sha256", hkdf(fileKey, Buffer.alloc(0), "header"))
        .update(header.covered)
        .digest();
      if (mac.length !== header.mac.length || !timingSafeEqual(mac, header.mac)) throw new Error("header MAC");
      return openPayload(fileKey, header.payload);
    }
  }
  throw new Error("no identity matched");
}

function unwrap(stanzas: readonly string[], identities: readonly X25519Identity[]): UnwrapAnswer {
  let malformed = false;
  for (const enc of stanzas) {
    try {
      return { ok: true, key: open(enc, identities) };
    } catch (error) {
      // another stanza may be for one of the identities
      if (error instanceof Malformed) malformed = true;
    }
  }
  return { ok: false, reason: malformed ? "malformed" : "no-match" };
}

/**
 * Each file's answer, in the request's order, when every identity is an X25519 one (a line that
 * starts so but is no valid key: "bad-identity"); undefined for any other identity type, which
 * age-encryption unwraps (age-unwrap.ts).
 */
export function unwrapX25519(request: UnwrapRequest): UnwrapAnswer[] | undefined {
  if (!request.identities.every((i) => i.startsWith("AGE-SECRET-KEY-1"))) return undefined;
  const identities = identitiesOf(request.identities);
  if (identities === "bad-identity") return request.files.map(() => ({ ok: false, reason: "bad-identity" }));
  return request.files.map((stanzas) => unwrap(stanzas, identities));
}
