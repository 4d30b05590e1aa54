/**
 * The SOPS file format, as the `sops` tool writes it (getsops/sops: stores/stores.go for the
 * metadata, aes/cipher.go for `ENC[…]`, sops.go for which values are encrypted). Hand-written:
 * no JavaScript library reads SOPS files, and gatesync needs only the reading half, with age
 * keys. Nothing here decrypts: sops-tree.ts walks and verifies, sops-age.ts unwraps the data key.
 */
import { linearTest } from "../../linear-regex.js";

/** The codes of a SOPS file refused (errors.ts lists them; secrets/ imports no module that imports it). */
export type SopsCode =
  | "SOPS_INVALID"
  | "SOPS_INTEGRITY"
  | "SOPS_KEY_PATH"
  | "SOPS_NO_IDENTITY"
  | "SOPS_WRONG_KEY"
  | "SOPS_KEY_UNSUPPORTED"
  | "SOPS_TOO_LARGE"
  | "SOPS_UNWRAP_BUDGET";

/** Why a SOPS file cannot be used: its code and a message naming no value. */
export class SopsProblem extends Error {
  constructor(
    readonly code: SopsCode,
    message: string,
  ) {
    super(message);
  }
}

/** One encrypted value, `ENC[AES256_GCM,data:…,iv:…,tag:…,type:…]`, its parts decoded. */
export interface EncryptedValue {
  readonly data: Buffer;
  readonly iv: Buffer;
  readonly tag: Buffer;
  readonly type: string;
}

export interface AgeStanza {
  readonly recipient: string;
  /** The data key, encrypted to `recipient` and armored (`-----BEGIN AGE ENCRYPTED FILE-----`). */
  readonly enc: string;
}

/** A selector's pattern as compiled: whether a key matches it. */
export type KeyTest = (key: string) => boolean;

/** Which values sops encrypted (sops.go shouldBeEncrypted), and how the file is verified. */
export interface SopsMetadata {
  readonly age: readonly AgeStanza[];
  /** Key types other than age the file was encrypted for (pgp, kms …): gatesync cannot use them. */
  readonly otherKeyTypes: readonly string[];
  readonly lastModified: string;
  readonly mac: string;
  readonly unencryptedSuffix: string | undefined;
  readonly encryptedSuffix: string | undefined;
  readonly unencryptedRegex: KeyTest | undefined;
  readonly encryptedRegex: KeyTest | undefined;
  readonly macOnlyEncrypted: boolean;
}

const b64 = "[A-Za-z0-9+/]*={0,2}";
const encPattern = new RegExp(`^ENC\\[AES256_GCM,data:(${b64}),iv:(${b64}),tag:(${b64}),type:([a-z]+)\\]$`);
const valueTypes = new Set(["str", "int", "float", "bool", "bytes", "time"]);

export const looksEncrypted = (s: string): boolean => s.startsWith("ENC[");

/** The parts of an `ENC[…]` value at `where`; a truncated or altered one is refused. */
export function parseEncrypted(text: string, where: string): EncryptedValue {
  const m = encPattern.exec(text);
  if (m === null)
    throw new SopsProblem("SOPS_INVALID", `the value at ${where} is not a whole ENC[AES256_GCM,data:…,iv:…,tag:…,type:…] value (truncated or altered)`);
  const [data, iv, tag] = [m[1]!, m[2]!, m[3]!].map((s) => Buffer.from(s, "base64"));
  if (data!.length === 0 || iv!.length === 0 || tag!.length !== 16 || !valueTypes.has(m[4]!)) {
    throw new SopsProblem(
      "SOPS_INVALID",
      `the value at ${where} is not a well-formed ENC[…] value (empty data or iv, a tag that is not 16 bytes, or an unknown type)`,
    );
  }
  return { data: data!, iv: iv!, tag: tag!, type: m[4]! };
}

/** Whether a parsed document is a SOPS file: a mapping whose `sops` holds a mac (load/classify.ts leaves it out of the resources). */
export function hasSopsMetadata(value: unknown): boolean {
  if (value === null || typeof value !== "object" || Array.isArray(value)) return false;
  const sops = (value as Record<string, unknown>).sops;
  return sops !== null && typeof sops === "object" && "mac" in sops && "lastmodified" in sops;
}

const keyTypes = ["pgp", "kms", "gcp_kms", "azure_kv", "hc_vault", "hckms"] as const;

const isRecord = (v: unknown): v is Record<string, unknown> => v !== null && typeof v === "object" && !Array.isArray(v);
const present = (v: unknown): boolean => Array.isArray(v) && v.length > 0;

function optionalString(meta: Record<string, unknown>, name: string): string | undefined {
  const v = meta[name];
  if (v === undefined || v === null || v === "") return undefined;
  if (typeof v !== "string") throw new SopsProblem("SOPS_INVALID", `sops.${name} is not a string`);
  return v;
}

/**
 * A selector's pattern (Go's RE2 syntax, as sops reads it, a leading `(?i)` included), compiled
 * with the linear-time engine: the file comes from the repository, and the pattern is tested
 * against every key of it.
 */
function goRegex(meta: Record<string, unknown>, name: string): KeyTest | undefined {
  const source = optionalString(meta, name);
  if (source === undefined) return undefined;
  try {
    return linearTest(source);
  } catch {
    throw new SopsProblem("SOPS_INVALID", `sops.${name} is not a pattern gatesync can read`);
  }
}

function ageStanzas(list: unknown): AgeStanza[] {
  if (list === undefined || list === null) return [];
  if (!Array.isArray(list)) throw new SopsProblem("SOPS_INVALID", "sops.age is not a list");
  return list.map((entry, i) => {
    if (!isRecord(entry) || typeof entry.recipient !== "string" || typeof entry.enc !== "string") {
      throw new SopsProblem("SOPS_INVALID", `sops.age[${i}] has no recipient and enc`);
    }
    return { recipient: entry.recipient, enc: entry.enc };
  });
}

/** The keys of the one key group: a file split across several (Shamir's secret sharing) is refused. */
function keyGroup(meta: Record<string, unknown>): Record<string, unknown> {
  const groups = meta.key_groups;
  if (groups === undefined || groups === null) return meta;
  if (!Array.isArray(groups) || groups.length !== 1 || !isRecord(groups[0])) {
    throw new SopsProblem(
      "SOPS_KEY_UNSUPPORTED",
      "the data key is split across several key groups (shamir_threshold): gatesync reads files with one key group",
    );
  }
  return groups[0];
}

/** The `sops` block of a parsed file; `undefined` when there is none (not a SOPS file). */
export function readMetadata(meta: unknown): SopsMetadata {
  if (!isRecord(meta)) throw new SopsProblem("SOPS_INVALID", "the `sops` metadata block is not a mapping");
  for (const name of ["unencrypted_comment_regex", "encrypted_comment_regex"]) {
    if (optionalString(meta, name) !== undefined) {
      throw new SopsProblem("SOPS_INVALID", `sops.${name}: gatesync does not read files whose encrypted values are chosen by their comments`);
    }
  }
  const group = keyGroup(meta);
  const mac = optionalString(meta, "mac");
  const lastModified = optionalString(meta, "lastmodified");
  if (mac === undefined || lastModified === undefined) {
    throw new SopsProblem("SOPS_INVALID", "the `sops` block has no mac or no lastmodified: the file cannot be verified");
  }
  return {
    age: ageStanzas(group.age),
    otherKeyTypes: keyTypes.filter((t) => present(group[t])),
    lastModified,
    mac,
    unencryptedSuffix: optionalString(meta, "unencrypted_suffix"),
    encryptedSuffix: optionalString(meta, "encrypted_suffix"),
    unencryptedRegex: goRegex(meta, "unencrypted_regex"),
    encryptedRegex: goRegex(meta, "encrypted_regex"),
    macOnlyEncrypted: meta.mac_only_encrypted === true,
  };
}

/** Whether sops encrypted the value at `path` (its mapping keys, list positions left out), as sops.go decides. */
export function shouldBeEncrypted(meta: SopsMetadata, path: readonly string[]): boolean {
  let encrypted = true;
  const { unencryptedSuffix, encryptedSuffix, unencryptedRegex, encryptedRegex } = meta;
  if (unencryptedSuffix !== undefined && path.some((k) => k.endsWith(unencryptedSuffix))) encrypted = false;
  if (encryptedSuffix !== undefined) encrypted = path.some((k) => k.endsWith(encryptedSuffix));
  if (unencryptedRegex !== undefined && path.some((k) => unencryptedRegex(k))) encrypted = false;
  if (encryptedRegex !== undefined) encrypted = path.some((k) => encryptedRegex(k));
  return encrypted;
}

/** `lastmodified` as sops authenticates the MAC with it: Go's time.RFC3339, without fractional seconds. */
export const macAdditionalData = (lastModified: string): string => lastModified.replace(/(T\d\d:\d\d:\d\d)\.\d+/, "$1");
