/**
 * The rulesets' findings of each file, kept across processes: a CI job or a pre-commit run lints
 * again only the files that changed. One entry per resource file under the config's
 * `.gatesync/rules-cache/`, named by the hash of everything the findings depend on — the file's
 * path and content, both rulesets' hashes (which cover every file a ruleset extends), the versions
 * of Spectral's packages and of gatesync — so a changed input is a different entry, never a stale one.
 *
 * An entry is read as untrusted input: bounded in size, parsed, and used only if its key is the
 * one asked for and every finding has the shape of a rule's finding about that file; anything
 * else is ignored (and the entry written again from a fresh lint). Writes are atomic (a
 * temporary file renamed) and best-effort: a read-only directory only means no cache.
 */
import { createHash } from "node:crypto";
import { mkdirSync, readFileSync, readdirSync, renameSync, statSync, unlinkSync, writeFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { ErrorCode } from "../errors.js";
import { packageRoot } from "../package-root.js";
import type { Diagnostic } from "../errors.js";

const require = createRequire(import.meta.url);

/** Changes when an entry's layout or what it records changes. */
const formatVersion = 1;
/** Largest entry read: a file's findings (a 5 MiB file with a finding per line stays under it). */
export const maxEntryBytes = 16 * 1024 * 1024;
const entryName = /^[0-9a-f]{64}\.json$/;

/** The cache directory of a config whose gatesync.yaml lies in `baseDir`. */
export const findingsCacheDir = (baseDir: string): string => path.join(baseDir, ".gatesync", "rules-cache");

/** A package's version, read from the package.json above its entry point (some do not export it). */
function packageVersion(name: string): string {
  try {
    let dir = path.dirname(require.resolve(name));
    for (let i = 0; i < 6; i++) {
      try {
        const pkg = JSON.parse(readFileSync(path.join(dir, "package.json"), "utf8")) as { name?: unknown; version?: unknown };
        if (pkg.name === name) return String(pkg.version);
      } catch {
        // no package.json here: one level up
      }
      dir = path.dirname(dir);
    }
  } catch {
    // not installed: part of the key all the same
  }
  return "?";
}

let versions: string | undefined;

/** gatesync's and Spectral's versions: a finding may change with any of them. */
function toolVersions(): string {
  versions ??= [
    "gatesync",
    "@stoplight/spectral-core",
    "@stoplight/spectral-functions",
    "@stoplight/spectral-rulesets",
    "@stoplight/spectral-formats",
    "@stoplight/spectral-parsers",
    "@stoplight/spectral-ref-resolver",
  ]
    .map((p) => `${p}@${p === "gatesync" ? gatesyncVersion() : packageVersion(p)}`)
    .join(" ");
  return versions;
}

function gatesyncVersion(): string {
  try {
    const pkg = JSON.parse(readFileSync(path.join(packageRoot, "package.json"), "utf8")) as { version?: unknown };
    return String(pkg.version);
  } catch {
    return "?";
  }
}

/** Cache directories this thread made (or found): made once, not once per file. */
const madeDirectories = new Set<string>();

/** Writes `text` to `file` in `dir`, making the directory first when this thread has not seen it (or it was removed since). */
function writeEntry(dir: string, file: string, text: string): void {
  if (!madeDirectories.has(dir)) {
    mkdirSync(dir, { recursive: true });
    madeDirectories.add(dir);
  }
  try {
    writeFileSync(file, text);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== "ENOENT") throw err;
    mkdirSync(dir, { recursive: true });
    writeFileSync(file, text);
  }
}

/** The findings of one document under one ruleset, as a cache entry holds them. */
export interface FindingsMemo {
  get(slot: string): readonly Diagnostic[] | undefined;
  set(slot: string, found: readonly Diagnostic[]): void;
}

const severities = new Set(["error", "warning", "info"]);
const optionalStrings = ["hint", "resource", "path"] as const;
const isPosition = (v: unknown): boolean => v === undefined || (Number.isInteger(v) && (v as number) > 0);

/** A rule's finding about `file`, as the runner makes them; anything else makes the entry unusable. */
function isFinding(d: unknown, file: string): d is Diagnostic {
  if (d === null || typeof d !== "object" || Array.isArray(d)) return false;
  const f = d as Record<string, unknown>;
  return (
    f.code === ErrorCode.RULESET_VIOLATION &&
    f.file === file &&
    typeof f.severity === "string" &&
    severities.has(f.severity) &&
    typeof f.message === "string" &&
    typeof f.rule === "string" &&
    optionalStrings.every((k) => f[k] === undefined || typeof f[k] === "string") &&
    isPosition(f.line) &&
    isPosition(f.column) &&
    Object.keys(f).every((k) => allowedKeys.has(k))
  );
}

const allowedKeys = new Set(["severity", "code", "rule", "file", "resource", "path", "line", "column", "message", "hint"]);

/** The slots of a valid entry for `key` and `file`, or undefined. */
function parseEntry(text: string, key: string, file: string): Map<string, readonly Diagnostic[]> | undefined {
  let raw: unknown;
  try {
    raw = JSON.parse(text);
  } catch {
    return undefined;
  }
  if (raw === null || typeof raw !== "object") return undefined;
  const entry = raw as { version?: unknown; key?: unknown; file?: unknown; findings?: unknown };
  if (entry.version !== formatVersion || entry.key !== key || entry.file !== file) return undefined;
  if (entry.findings === null || typeof entry.findings !== "object" || Array.isArray(entry.findings)) return undefined;
  const slots = new Map<string, readonly Diagnostic[]>();
  for (const [slot, found] of Object.entries(entry.findings as Record<string, unknown>)) {
    if (!Array.isArray(found) || !found.every((d) => isFinding(d, file))) return undefined;
    slots.set(slot, found);
  }
  return slots;
}

/**
 * One file's entry: the findings kept for its documents (when the entry is valid), and those
 * linted now; `save` writes the entry when anything was linted.
 */
export class FileFindings implements FindingsMemo {
  private readonly slots: Map<string, readonly Diagnostic[]>;
  private changed = false;
  /** The entry's file name (what a run used: `pruneFindingsCache` keeps it). */
  readonly entry: string;
  private readonly key: string;
  private readonly file: string;
  /** A valid entry was found: its documents' findings are kept, with their positions. */
  readonly found: boolean;

  constructor(
    private readonly dir: string,
    inputs: { readonly rulesets: readonly string[]; readonly file: string; readonly absolute: string; readonly text: string },
  ) {
    this.file = inputs.file;
    this.key = createHash("sha256")
      .update(`${formatVersion}\0${toolVersions()}\0${inputs.rulesets.join("\0")}\0${inputs.file}\0${inputs.absolute}\0`)
      .update(inputs.text)
      .digest("hex");
    this.entry = `${this.key}.json`;
    const kept = this.read();
    this.found = kept !== undefined;
    this.slots = kept ?? new Map<string, readonly Diagnostic[]>();
  }

  private read(): Map<string, readonly Diagnostic[]> | undefined {
    const at = path.join(this.dir, this.entry);
    try {
      // a cold run finds no entry for any file: asked without an exception (its stack trace
      // was most of this function's time)
      const stat = statSync(at, { throwIfNoEntry: false });
      if (stat === undefined || stat.size > maxEntryBytes) return undefined;
      return parseEntry(readFileSync(at, "utf8"), this.key, this.file);
    } catch {
      return undefined; // none yet, or unreadable: linted as if none
    }
  }

  get(slot: string): readonly Diagnostic[] | undefined {
    return this.slots.get(slot);
  }

  set(slot: string, found: readonly Diagnostic[]): void {
    this.slots.set(slot, found);
    this.changed = true;
  }

  /** Writes the entry if a document was linted (best-effort). */
  save(): void {
    if (!this.changed) return;
    const text = JSON.stringify({ version: formatVersion, key: this.key, file: this.file, findings: Object.fromEntries(this.slots) });
    if (Buffer.byteLength(text) > maxEntryBytes) return;
    const at = path.join(this.dir, this.entry);
    const temporary = `${at}.${process.pid}.${Math.random().toString(36).slice(2)}.tmp`;
    try {
      writeEntry(this.dir, temporary, text);
      renameSync(temporary, at);
      this.changed = false;
    } catch {
      try {
        unlinkSync(temporary);
      } catch {
        // nothing was written
      }
    }
  }
}

/**
 * Keeps the cache bounded: once it holds more than twice the entries this run used (plus a
 * margin for runs over part of the repository), the entries this run did not use are removed —
 * those of files since changed or removed, or of a former ruleset. Best-effort.
 */
export function pruneFindingsCache(dir: string, used: ReadonlySet<string>): void {
  let names: string[];
  try {
    names = readdirSync(dir);
  } catch {
    return;
  }
  const entries = names.filter((n) => entryName.test(n));
  const unused = entries.length > 2 * used.size + 1_000 ? entries.filter((n) => !used.has(n)) : [];
  // a temporary file left by a process that died while writing (one writing now is young: left to it)
  const stray = names.filter((n) => n.endsWith(".tmp"));
  for (const name of [...unused, ...stray]) {
    try {
      if (name.endsWith(".tmp") && Date.now() - statSync(path.join(dir, name)).mtimeMs < 60_000) continue;
      unlinkSync(path.join(dir, name));
    } catch {
      // removed meanwhile
    }
  }
}
