/**
 * What `validate` warns about in a SOPS file a reference reads, located in that file (line,
 * column, key path): a plaintext value where the file's own selectors say sops encrypted it
 * (SOPS_PLAINTEXT: written by hand after encryption), and a value sops leaves in clear text by
 * those selectors under a key that names a secret (SECRET_LITERAL: `db_password_unencrypted`).
 * Located while the file is parsed for its values (sops-tree.ts: one parse), described when
 * validate asks; never a value in a message.
 */
import { loadYamlLibrary } from "../../yaml/yaml-library.js";
import type { LineCounter, YamlNode } from "../../yaml/yaml-library.js";
import { looksEncrypted, shouldBeEncrypted } from "./sops-format.js";
import type { SopsMetadata } from "./sops-format.js";
import { namesASecret } from "../secret-names.js";

/** Where a finding is: its code, position and key path (list positions included). */
export interface LocatedFinding {
  readonly code: "SOPS_PLAINTEXT" | "SECRET_LITERAL";
  readonly line: number;
  readonly column: number;
  readonly keyPath: readonly string[];
}

export interface SopsFinding extends Omit<LocatedFinding, "keyPath"> {
  /** `app2.db.password`, `an_array.1`. */
  readonly keyPath: string;
  readonly message: string;
  readonly hint: string;
}

interface Walk {
  readonly meta: SopsMetadata;
  readonly lines: LineCounter;
  readonly out: LocatedFinding[];
}

/** What is wrong with the value at `keys` (mapping keys only), if anything: the one rule of both walks (this one, sops-tree.ts's). */
export function findingOf(meta: SopsMetadata, keys: readonly string[], value: unknown): LocatedFinding["code"] | undefined {
  if (value === null || value === "" || (typeof value !== "string" && typeof value !== "number" && typeof value !== "boolean")) return undefined;
  if (shouldBeEncrypted(meta, keys)) return typeof value === "string" && looksEncrypted(value) ? undefined : "SOPS_PLAINTEXT";
  if (typeof value === "string" && namesASecret(keys[keys.length - 1] ?? "")) return "SECRET_LITERAL";
  return undefined;
}

function leaf(walk: Walk, node: YamlNode, value: unknown, keys: readonly string[], shown: readonly string[]): void {
  const code = findingOf(walk.meta, keys, value);
  if (code === undefined) return;
  const { line, col } = walk.lines.linePos(node.range?.[0] ?? 0);
  walk.out.push({ code, line, column: col, keyPath: shown });
}

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

/** The findings of a SOPS file's parsed document (`root`), its metadata read, its positions counted by `lines`. */
export function locateFindings(root: unknown, meta: SopsMetadata, lines: LineCounter): LocatedFinding[] {
  const walk: Walk = { meta, lines, out: [] };
  walkNode(walk, root, [], []);
  return walk.out;
}

/** A key path as `sops set` takes it: `["app2"]["db"]["password"]`, list positions as numbers. */
const setPath = (keys: readonly string[]): string => keys.map((k) => (/^(0|[1-9][0-9]*)$/.test(k) ? `[${k}]` : `[${JSON.stringify(k)}]`)).join("");

/** A finding said: `file` is the SOPS file's path as findings name files. */
export function describeFinding(f: LocatedFinding, file: string, meta: SopsMetadata): SopsFinding {
  const at = f.keyPath.join(".");
  const base = { code: f.code, line: f.line, column: f.column, keyPath: at };
  if (f.code === "SOPS_PLAINTEXT") {
    return {
      ...base,
      message: `the value at ${at} is plaintext, but the file's selectors say sops encrypts it: it was written after encryption, and no \${sops:} reference of this file resolves`,
      hint: `restore ${file} as sops wrote it (\`git checkout -- ${file}\`), then set the value with sops, which encrypts it: \`sops set ${file} '${setPath(f.keyPath)}' '"…"'\``,
    };
  }
  const encryptedKeys = f.keyPath.map((k) => (meta.unencryptedSuffix === undefined ? k : k.replace(meta.unencryptedSuffix, "")));
  return {
    ...base,
    message: `the value at ${at} names a secret, but the file's selectors leave it in clear text (unencrypted_suffix, unencrypted_regex or encrypted_regex)`,
    hint: `keep the secret under a key the file's selectors encrypt (\`sops set ${file} '${setPath(encryptedKeys)}' '"…"'\`) and remove ${at} with \`sops unset ${file} '${setPath(f.keyPath)}'\``,
  };
}
