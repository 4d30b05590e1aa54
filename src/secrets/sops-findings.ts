/**
 * What `validate` warns about in a SOPS file a reference reads, located in that file (line,
 * column, key path): a plaintext value where the file's own selectors say sops encrypted it
 * (SOPS_PLAINTEXT: written by hand after encryption), and a value sops leaves in clear text by
 * those selectors under a key that names a secret (SECRET_LITERAL: `db_password_unencrypted`).
 * Read without keys, from the text as committed; never a value in a message.
 */
import type { LineCounter, Node as YamlNode } from "yaml";
import { loadYamlLibrary } from "../yaml-library.js";
import { looksEncrypted, shouldBeEncrypted } from "./sops-format.js";
import type { SopsMetadata } from "./sops-format.js";
import { namesASecret } from "./secret-names.js";

export interface SopsFinding {
  readonly code: "SOPS_PLAINTEXT" | "SECRET_LITERAL";
  readonly line: number;
  readonly column: number;
  /** The value's key path, list positions included (`app2.db.password`, `an_array.1`). */
  readonly keyPath: string;
  readonly message: string;
  readonly hint: string;
}

interface Walk {
  readonly meta: SopsMetadata;
  readonly file: string;
  readonly lines: LineCounter;
  readonly out: SopsFinding[];
}

function finding(walk: Walk, node: YamlNode, code: SopsFinding["code"], shown: readonly string[], texts: { message: string; hint: string }): void {
  const { line, col } = walk.lines.linePos(node.range?.[0] ?? 0);
  walk.out.push({ code, line, column: col, keyPath: shown.join("."), ...texts });
}

function leaf(walk: Walk, node: YamlNode, value: unknown, keys: readonly string[], shown: readonly string[]): void {
  if (value === null || value === "" || (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean")) return;
  const at = shown.join(".");
  if (shouldBeEncrypted(walk.meta, keys)) {
    if (typeof value === "string" && looksEncrypted(value)) return;
    finding(walk, node, "SOPS_PLAINTEXT", shown, {
      message: `the value at ${at} is plaintext, but the file's selectors say sops encrypts it: it was written after encryption, and no \${sops:} reference of this file resolves`,
      hint: `restore ${walk.file} as sops wrote it (\`git checkout -- ${walk.file}\`), then set the value with sops, which encrypts it: \`sops set ${walk.file} '${setPath(shown)}' '"…"'\``,
    });
  } else if (typeof value === "string" && namesASecret(keys[keys.length - 1] ?? "")) {
    finding(walk, node, "SECRET_LITERAL", shown, {
      message: `the value at ${at} names a secret, but the file's selectors leave it in clear text (unencrypted_suffix, unencrypted_regex or encrypted_regex)`,
      hint: `keep the secret under a key the file's selectors encrypt (\`sops set ${walk.file} '${setPath(shown.map((k) => k.replace(walk.meta.unencryptedSuffix ?? "\0", "")))}' '"…"'\`) and remove ${at} with \`sops unset ${walk.file} '${setPath(shown)}'\``,
    });
  }
}

/** A key path as `sops set` takes it: `["app2"]["db"]["password"]`, list positions as numbers. */
const setPath = (shown: readonly string[]): string => shown.map((k) => (/^(0|[1-9][0-9]*)$/.test(k) ? `[${k}]` : `[${JSON.stringify(k)}]`)).join("");

function walkNode(walk: Walk, node: unknown, keys: readonly string[], shown: readonly string[]): void {
  const yaml = loadYamlLibrary();
  if (yaml.isMap(node)) {
    for (const pair of node.items) {
      const key = yaml.isScalar(pair.key) ? pair.key.value : undefined;
      if (typeof key !== "string" || (keys.length === 0 && key === "sops")) continue;
      walkNode(walk, pair.value, [...keys, key], [...shown, key]);
    }
  } else if (yaml.isSeq(node)) {
    // list positions are no part of the key path the selectors match
    node.items.forEach((item, i) => walkNode(walk, item, keys, [...shown, String(i)]));
  } else if (yaml.isScalar(node)) {
    leaf(walk, node, node.value, keys, shown);
  }
}

/** The findings of a SOPS file's text (`file`: its path as shown), read with its metadata `meta` (already checked). */
export function sopsFindings(text: string, meta: SopsMetadata, file: string): SopsFinding[] {
  const yaml = loadYamlLibrary();
  const lines = new yaml.LineCounter();
  const doc = yaml.parseDocument(text, { lineCounter: lines, uniqueKeys: true });
  const walk: Walk = { meta, file, lines, out: [] };
  walkNode(walk, doc.contents, [], []);
  return walk.out;
}
