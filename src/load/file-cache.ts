/**
 * What was made of each file, kept between runs while the file is unchanged and made under the
 * same settings: the daemon's runs after a one-file change read one file.
 *
 * A file is known by its path in the repository. It is unchanged when it is the file the value
 * was made of (same absolute path, size and modification time), or — a git source checks each
 * commit out in a directory of its own (source/revision-trees.ts), where every file is new to
 * the file system — when its content has the digest the value was made from: the caller proves
 * that (`moved`) and keeps the value again for where the file is now.
 *
 * The entries are kept per context — the settings they were made under (an environment's
 * values, patches, rulesets) — because the environments of one daemon check the same files
 * under their own settings, side by side: one run's verdicts are never another's, and one
 * environment's run does not drop another's entries. The contexts used least lately go first.
 */
import type { SourceFile } from "./list-files.js";

interface Entry<T> {
  readonly absolute: string;
  readonly size: number;
  readonly mtimeMs: number;
  /** The digest of the content the value was made from (contentDigest), when it was read. */
  readonly digest: string | undefined;
  readonly value: T;
}

/** A value kept for a file of the same path and size somewhere else: the same if the content has `digest`. */
export interface MovedEntry<T> {
  readonly digest: string;
  readonly value: T;
}

export class FileCache<T> {
  /** The entries of each context, by path in the repository; the least lately used context first. */
  private readonly contexts = new Map<string, Map<string, Entry<T>>>();

  /** `maxContexts`: settings kept at once (a daemon's environments, each with its own values). */
  constructor(private readonly maxContexts = 32) {}

  /** The value kept for this very file (same absolute path, size and time). */
  get(context: string, file: SourceFile): T | undefined {
    const hit = this.entries(context)?.get(file.path);
    return hit !== undefined && hit.absolute === file.absolute && hit.size === file.size && hit.mtimeMs === file.mtimeMs ? hit.value : undefined;
  }

  /** The value kept for a file of this path and size read elsewhere or earlier, and the digest its content must have. */
  moved(context: string, file: SourceFile): MovedEntry<T> | undefined {
    const hit = this.entries(context)?.get(file.path);
    return hit === undefined || hit.digest === undefined || hit.size !== file.size ? undefined : { digest: hit.digest, value: hit.value };
  }

  set(context: string, file: SourceFile, value: T, digest: string | undefined): void {
    let entries = this.entries(context);
    if (entries === undefined) {
      if (this.contexts.size >= this.maxContexts) this.contexts.delete(this.contexts.keys().next().value!);
      this.contexts.set(context, (entries = new Map<string, Entry<T>>()));
    }
    entries.set(file.path, { absolute: file.absolute, size: file.size, mtimeMs: file.mtimeMs, digest, value });
  }

  /** Drops a context's entry of a file (its path). */
  delete(context: string, path: string): void {
    this.contexts.get(context)?.delete(path);
  }

  /** Drops the entries of files not in `present` (paths in the repository), in every context. */
  retain(present: ReadonlySet<string>): void {
    for (const entries of this.contexts.values()) for (const key of entries.keys()) if (!present.has(key)) entries.delete(key);
  }

  /** A context's entries, now the most lately used. */
  private entries(context: string): Map<string, Entry<T>> | undefined {
    const entries = this.contexts.get(context);
    if (entries === undefined) return undefined;
    this.contexts.delete(context);
    this.contexts.set(context, entries);
    return entries;
  }
}
