/**
 * SOPS files as the `sops` tool writes them, for the tests: an age identity made by Debian's
 * `age-keygen`, the file's data key wrapped for it by Debian's `age -r RECIPIENT -a` (as sops
 * does), each value AES-256-GCM encrypted with its key path as additional data and the MAC over
 * the values in order (getsops/sops aes/cipher.go, sops.go) — so a test can write a value of its
 * own, and a rotation, where the carried fixtures (test/fixtures/sops) hold fixed ones.
 */
import { execFileSync } from "node:child_process";
import { createCipheriv, createHash, randomBytes } from "node:crypto";

export interface AgeIdentity {
  /** The `AGE-SECRET-KEY-1…` line (what SOPS_AGE_KEY holds). */
  readonly secret: string;
  readonly recipient: string;
}

/** A fresh age identity, from `age-keygen`. */
export function ageIdentity(): AgeIdentity {
  const text = execFileSync("age-keygen", { encoding: "utf8", stdio: ["ignore", "pipe", "ignore"] });
  return { secret: text.split("\n").find((l) => l.startsWith("AGE-SECRET-KEY-1"))!, recipient: /public key: (age1\S+)/.exec(text)![1]! };
}

/** A mapping of string values, nested: what a test encrypts. */
export interface SopsValues {
  readonly [key: string]: string | SopsValues;
}

function encrypt(key: Buffer, plain: Buffer, aad: string): string {
  const iv = randomBytes(32);
  const cipher = createCipheriv("aes-256-gcm", key, iv, { authTagLength: 16 });
  cipher.setAAD(Buffer.from(aad, "utf8"));
  const data = Buffer.concat([cipher.update(plain), cipher.final()]);
  return `ENC[AES256_GCM,data:${data.toString("base64")},iv:${iv.toString("base64")},tag:${cipher.getAuthTag().toString("base64")},type:str]`;
}

function encryptTree(values: SopsValues, key: Buffer, mac: ReturnType<typeof createHash>, path: readonly string[], indent: string): string {
  return Object.entries(values)
    .map(([k, v]) => {
      const at = [...path, k];
      if (typeof v !== "string") return `${indent}${k}:\n${encryptTree(v, key, mac, at, `${indent}    `)}`;
      mac.update(v, "utf8");
      return `${indent}${k}: ${encrypt(key, Buffer.from(v, "utf8"), `${at.join(":")}:`)}\n`;
    })
    .join("");
}

/** The YAML text of a SOPS file holding `values`, encrypted for `recipient` (every value encrypted). */
export function sopsYaml(values: SopsValues, recipient: string): string {
  const dataKey = randomBytes(32);
  const mac = createHash("sha512");
  const tree = encryptTree(values, dataKey, mac, [], "");
  const lastModified = new Date().toISOString().replace(/\.\d+Z$/, "Z");
  const wrapped = execFileSync("age", ["-r", recipient, "-a"], { input: dataKey, encoding: "utf8" });
  const enc = wrapped
    .trimEnd()
    .split("\n")
    .map((l) => `                ${l}`)
    .join("\n");
  return `${tree}sops:
    age:
        - recipient: ${recipient}
          enc: |
${enc}
    lastmodified: "${lastModified}"
    mac: ${encrypt(dataKey, Buffer.from(mac.digest("hex").toUpperCase(), "utf8"), lastModified)}
    unencrypted_suffix: _unencrypted
    version: 3.9.0
`;
}

/** The OrgKey `acme` whose HMAC string is `hmac` (a `${sops:…}` reference, or a literal): the resource the SOPS tests resolve. */
export const hmacOrgKey = (hmac: string): string => `apiVersion: gatesync.dev/v1
kind: OrgKey
metadata: { name: acme }
spec:
  keyId: acme
  org_id: acme
  rate: 1000
  per: 60
  hmac_enabled: true
  hmac_string: ${hmac}
`;
