/**
 * Writing a SOPS file, as the `sops` tool writes one (getsops/sops: aes/cipher.go for
 * `ENC[AES256_GCM,…]` with the key path as additional data, sops.go for the MAC — SHA-512 over
 * the plaintext values in order, upper-case hex, encrypted with `lastmodified` as its additional
 * data — stores/stores.go for the metadata): a fresh 32-byte data key, wrapped for each age
 * recipient by the `age-encryption` package and armored. Hand-written for the same reason as the
 * reader (sops-format.ts): no JavaScript library writes SOPS files; the format is small and the
 * tests decrypt what this writes with gatesync's reader, the `age` CLI and `sops` itself.
 *
 * Only a flat mapping of string values whose keys are `[A-Za-z0-9_]+` is written: what import
 * needs, and a YAML text with nothing to quote.
 */
import { createCipheriv, createHash, randomBytes } from "node:crypto";
import { Encrypter, armor } from "age-encryption";

export const ageRecipientPattern = /^age1[02-9ac-hj-np-z]{58}$/;

function encryptValue(key: Buffer, plain: string, aad: string): string {
  const iv = randomBytes(32);
  const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(aad, "utf8"));
  const data = Buffer.concat([cipher.update(Buffer.from(plain, "utf8")), cipher.final()]);
  return `ENC[AES256_GCM,data:${data.toString("base64")},iv:${iv.toString("base64")},tag:${cipher.getAuthTag().toString("base64")},type:str]`;
}

async function wrapped(dataKey: Buffer, recipient: string): Promise<string> {
  const e = new Encrypter();
  e.addRecipient(recipient);
  return armor.encode(await e.encrypt(dataKey));
}

/** The YAML text of a SOPS file holding `values` (sorted by key), every value encrypted for every recipient. */
export async function sopsFileText(values: Readonly<Record<string, string>>, recipients: readonly string[], now: Date = new Date()): Promise<string> {
  const keys = Object.keys(values).sort();
  for (const k of keys) if (!/^[A-Za-z0-9_]+$/.test(k)) throw new Error(`SOPS key ${JSON.stringify(k)} is not [A-Za-z0-9_]+`);
  for (const r of recipients) if (!ageRecipientPattern.test(r)) throw new Error("not an age recipient (age1…)");
  const dataKey = randomBytes(32);
  const mac = createHash("sha512");
  const lines = keys.map((k) => {
    mac.update(values[k]!, "utf8");
    return `${k}: ${encryptValue(dataKey, values[k]!, `${k}:`)}`;
  });
  const lastModified = now.toISOString().replace(/\.\d+Z$/, "Z");
  const stanzas: string[] = [];
  for (const r of recipients) {
    const armored = (await wrapped(dataKey, r))
      .trimEnd()
      .split("\n")
      .map((l) => `                ${l}`)
      .join("\n");
    stanzas.push(`        - recipient: ${r}\n          enc: |\n${armored}`);
  }
  const macValue = encryptValue(dataKey, mac.digest("hex").toUpperCase(), lastModified);
  return `${lines.map((l) => `${l}\n`).join("")}sops:\n    age:\n${stanzas.join("\n")}\n    lastmodified: "${lastModified}"\n    mac: ${macValue}\n    unencrypted_suffix: _unencrypted\n    version: 3.9.0\n`;
}
