/**
 * A SOPS file's tree: read in order (the MAC covers the values in the order sops wrote them),
 * decrypted with its data key and verified against its MAC before any value is given out
 * (getsops/sops sops.go Tree.Decrypt, cmd/sops/common DecryptTree). Hand-written: no JavaScript
 * library reads SOPS files. A value whose key path, iv, tag or data changed fails AES-GCM (the key
 * path is its additional data); a changed order, key or unencrypted value fails the MAC.
 */
import { createDecipheriv, createHash } from "node:crypto";
import { duplicateKeys } from "../../yaml/yaml-unique-keys.js";
import { loadYamlLibrary } from "../../yaml/yaml-library.js";
import type { YamlNode } from "../../yaml/yaml-library.js";
import { looksEncrypted, macAdditionalData, parseEncrypted, readMetadata, shouldBeEncrypted, SopsProblem } from "./sops-format.js";
import type { SopsMetadata } from "./sops-format.js";
import { findingOf, locateFindings } from "./sops-findings.js";
import type { LocatedFinding } from "./sops-findings.js";

export type Leaf = string | number | boolean | null;
export type SopsNode = { readonly map: ReadonlyArray<readonly [string, SopsNode]> } | { readonly list: readonly SopsNode[] } | { readonly leaf: Leaf };

export interface SopsFile {
  readonly tree: SopsNode & { readonly map: ReadonlyArray<readonly [string, SopsNode]> };
  readonly meta: SopsMetadata;
  /** What validate warns about in it, located in the same parse (sops-findings.ts). */
  readonly findings: readonly LocatedFinding[];
}

/** sops.go MACOnlyEncryptedInitialization: a MAC over encrypted values only never equals one over all. */
const macOnlyEncryptedInit = Buffer.from("8a3fd2ad54ce66527b1034f3d147be0b0b975b3bf44f72c6fdadec8176f27d69", "hex");

function toNode(node: YamlNode | null, depth: number): SopsNode {
  const yaml = loadYamlLibrary();
  if (depth > 128) throw new SopsProblem("SOPS_INVALID", "the file is nested too deeply");
  if (node === null) return { leaf: null };
  if (yaml.isMap(node)) {
    return {
      map: node.items.map((pair) => {
        const key = yaml.isScalar(pair.key) ? pair.key.value : undefined;
        if (typeof key !== "string") throw new SopsProblem("SOPS_INVALID", "a mapping key is not a string (sops reads string keys only)");
        return [key, toNode(pair.value as YamlNode | null, depth + 1)] as const;
      }),
    };
  }
  if (yaml.isSeq(node)) return { list: node.items.map((item) => toNode(item as YamlNode | null, depth + 1)) };
  if (yaml.isScalar(node) && (node.value === null || ["string", "number", "boolean"].includes(typeof node.value))) return { leaf: node.value as Leaf };
  throw new SopsProblem("SOPS_INVALID", "the file holds an alias or a value of a type sops does not write");
}

/**
 * A SOPS file's text (YAML or JSON) read into its tree and metadata, nothing decrypted: by the
 * value-only parse `fast` where it is sure (load/fast-yaml.ts, handed in: a tenth of the time,
 * and 50 files were ~100 ms of a plan), else — and for a file with something to warn about,
 * located — by `yaml`.
 */
export function parseSopsFile(text: string, fast?: ValueParse): SopsFile {
  return (fast === undefined ? undefined : parsedFast(text, fast)) ?? parsedFully(text);
}

/** A text's one document as plain values, or undefined where it is not sure (load/fast-yaml.ts oneDocumentFast). */
export type ValueParse = (text: string) => unknown;

function parsedFully(text: string): SopsFile {
  const yaml = loadYamlLibrary();
  const lines = new yaml.LineCounter();
  // duplicate keys found in one pass (yaml-unique-keys.ts): yaml's own check is quadratic
  const docs = yaml.parseAllDocuments(text, { uniqueKeys: false, lineCounter: lines });
  if (!Array.isArray(docs) || docs.length !== 1 || docs[0]!.errors.length > 0 || duplicateKeys(yaml, docs[0]!).length > 0) {
    throw new SopsProblem("SOPS_INVALID", "the file is not one YAML or JSON document");
  }
  const root = toNode(docs[0]!.contents, 0);
  if (!("map" in root)) throw new SopsProblem("SOPS_INVALID", "the file is not a mapping");
  if (!root.map.some(([k]) => k === "sops")) throw new SopsProblem("SOPS_INVALID", "the file has no `sops` metadata: it is not a SOPS-encrypted file");
  // only the metadata is made plain JavaScript: the tree is walked as read, in its order
  const sops: unknown = (docs[0]!.contents as YamlNode & { get(key: string, keepScalar: true): unknown }).get("sops", true);
  const meta = readMetadata(yaml.isNode(sops) ? sops.toJSON() : sops);
  return { tree: { map: root.map.filter(([k]) => k !== "sops") }, meta, findings: locateFindings(docs[0]!.contents, meta, lines) };
}

/**
 * The file from the value-only parse, or undefined where it might differ from `parsedFully`: a
 * key JavaScript orders before the others (the MAC covers the order) or that may be no string,
 * anything unusual, any finding (it needs its position).
 */
function parsedFast(text: string, fast: ValueParse): SopsFile | undefined {
  const value = fast(text);
  if (value === null || typeof value !== "object" || Array.isArray(value) || !("sops" in value)) return undefined;
  const root = fromValue(value, 0);
  if (root === undefined || !("map" in root)) return undefined;
  const meta = readMetadata(value.sops);
  const tree = { map: root.map.filter(([k]) => k !== "sops") };
  return hasFinding(tree, meta, []) ? undefined : { tree, meta, findings: [] };
}

/**
 * Keys the fast path leaves to `yaml`: integer keys (an object lists them first), and every key
 * the YAML core schema might read as no string (`1.5`, `true`, `~`, `.inf`), which toNode refuses
 * once `yaml` says what it was (js-yaml gives each as a string key).
 */
const notSureKey = /^(?:$|[-+.~0-9]|(?:true|false|null)$|__proto__$)/i;

function fromValue(value: unknown, depth: number): SopsNode | undefined {
  if (depth > 128) return undefined;
  if (value === null || typeof value === "string" || typeof value === "number" || typeof value === "boolean") return { leaf: value };
  if (typeof value !== "object" || (!Array.isArray(value) && Object.getPrototypeOf(value) !== Object.prototype)) return undefined;
  const nodes: SopsNode[] = [];
  for (const v of Array.isArray(value) ? value : Object.values(value)) {
    const node = fromValue(v, depth + 1);
    if (node === undefined) return undefined;
    nodes.push(node);
  }
  if (Array.isArray(value)) return { list: nodes };
  const keys = Object.keys(value);
  if (keys.some((k) => notSureKey.test(k))) return undefined;
  return { map: keys.map((k, i) => [k, nodes[i]!] as const) };
}

function hasFinding(node: SopsNode, meta: SopsMetadata, path: readonly string[]): boolean {
  if ("map" in node) return node.map.some(([k, v]) => hasFinding(v, meta, [...path, k]));
  if ("list" in node) return node.list.some((v) => hasFinding(v, meta, path));
  return findingOf(meta, path, node.leaf) !== undefined;
}

function openValue(text: string, key: Buffer, aad: string, where: string): Buffer {
  const enc = parseEncrypted(text, where);
  try {
    const decipher = createDecipheriv("aes-256-gcm", key, enc.iv, { authTagLength: 16 });
    decipher.setAAD(Buffer.from(aad, "utf8"));
    decipher.setAuthTag(enc.tag);
    return Buffer.concat([decipher.update(enc.data), decipher.final()]);
  } catch {
    throw new SopsProblem("SOPS_INTEGRITY", `the value at ${where} does not decrypt with the file's data key: it was changed or moved after encryption`);
  }
}

/** sops.go ToBytes for an unencrypted value (Go's strconv formats). */
function leafBytes(v: Exclude<Leaf, null>): string {
  if (typeof v === "boolean") return v ? "True" : "False";
  if (typeof v === "number") return Number.isInteger(v) && Math.abs(v) < 1e21 ? BigInt(v).toString() : String(v);
  return v;
}

interface Walk {
  readonly file: SopsFile;
  readonly key: Buffer;
  readonly hash: ReturnType<typeof createHash>;
}

function decryptLeaf(walk: Walk, leaf: Leaf, path: readonly string[]): SopsNode {
  const encrypted = shouldBeEncrypted(walk.file.meta, path);
  const hashed = !walk.file.meta.macOnlyEncrypted || encrypted;
  if (leaf === null) return { leaf };
  if (!encrypted || leaf === "") {
    if (hashed) walk.hash.update(leafBytes(leaf), "utf8");
    return { leaf };
  }
  // checkSopsStructure has refused a plaintext value here: parseEncrypted refuses it again
  const plain = openValue(String(leaf), walk.key, `${path.join(":")}:`, path.join("."));
  walk.hash.update(plain);
  return { leaf: plain.toString("utf8") };
}

function decryptNode(walk: Walk, node: SopsNode, path: readonly string[]): SopsNode {
  if ("map" in node) return { map: node.map.map(([k, v]) => [k, decryptNode(walk, v, [...path, k])] as const) };
  // list positions are not part of the key path sops authenticates a value with
  if ("list" in node) return { list: node.list.map((v) => decryptNode(walk, v, path)) };
  return decryptLeaf(walk, node.leaf, path);
}

/**
 * What can be checked without a key: every value the file's selectors say is encrypted is a
 * whole ENC[…] value (a plaintext value under `encrypted_regex`, a truncated one, is refused).
 */
export function checkSopsStructure(file: SopsFile, node: SopsNode = file.tree, path: readonly string[] = []): void {
  if ("map" in node) for (const [k, v] of node.map) checkSopsStructure(file, v, [...path, k]);
  else if ("list" in node) for (const v of node.list) checkSopsStructure(file, v, path);
  else if (node.leaf !== null && node.leaf !== "" && shouldBeEncrypted(file.meta, path)) {
    const where = path.join(".");
    if (typeof node.leaf !== "string" || !looksEncrypted(node.leaf)) {
      throw new SopsProblem("SOPS_INVALID", `the value at ${where} should be encrypted (by the file's own selectors) but is plaintext`);
    }
    parseEncrypted(node.leaf, where);
  }
}

/** The file's tree with every value decrypted, once its MAC is verified; nothing is returned from a file that fails. */
export function decryptSopsFile(file: SopsFile, key: Buffer): SopsNode {
  const hash = createHash("sha512");
  if (file.meta.macOnlyEncrypted) hash.update(macOnlyEncryptedInit);
  const tree = decryptNode({ file, key, hash }, file.tree, []);
  const computed = hash.digest("hex").toUpperCase();
  const stored = openValue(file.meta.mac, key, macAdditionalData(file.meta.lastModified), "sops.mac").toString("utf8");
  if (stored !== computed) {
    throw new SopsProblem("SOPS_INTEGRITY", "the file's MAC does not match its values: a value, key or their order was changed after encryption");
  }
  return tree;
}

/** The node at a key path (`a.b.0.c`: mapping keys, list positions); `undefined` when the file has none there. */
export function nodeAt(tree: SopsNode, keyPath: readonly string[]): SopsNode | undefined {
  let node: SopsNode | undefined = tree;
  for (const segment of keyPath) {
    if (node === undefined) return undefined;
    if ("map" in node) node = node.map.find(([k]) => k === segment)?.[1];
    else if ("list" in node && /^(0|[1-9][0-9]*)$/.test(segment)) node = node.list[Number(segment)];
    else return undefined;
  }
  return node;
}

/** Every leaf of a tree with its key path (the whole-file form `${sops:PATH}` reads a file of one value). */
export function leavesOf(node: SopsNode, path: string[] = []): Array<{ readonly path: readonly string[]; readonly leaf: Leaf }> {
  if ("map" in node) return node.map.flatMap(([k, v]) => leavesOf(v, [...path, k]));
  if ("list" in node) return node.list.flatMap((v, i) => leavesOf(v, [...path, String(i)]));
  return [{ path, leaf: node.leaf }];
}
