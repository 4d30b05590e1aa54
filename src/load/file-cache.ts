/**
 * What was made of each file, kept between runs while the file is unchanged (same size and
 * modification time) and made under the same settings: the daemon's runs after a one-file
 * change read one file.
 *
 * The entries are kept per context — the settings they were made under (an environment's
 * values, patches, rulesets) — because the environments of one daemon check the same files
 * under their own settings, side by side: one run's verdicts are never another's, and one
 * environment's run does not drop another's entries. The contexts used least lately go first.
 */
import type { SourceFile } from "./list-files.js";

interface Entry<T> {
  readonly path: string;
  readonly size: number;
  readonly mtimeMs: number;
  readonly value: T;
}

export class FileCache<T> {
  /** The entries of each context, by absolute path; the least lately used context first. */
  private readonly contexts = new Map<string, Map<string, Entry<T>>>();

  /** `maxContexts`: settings kept at once (a daemon's environments, each with its own values). */
  constructor(private readonly maxContexts = 32) {}

  get(context: string, file: SourceFile): T | undefined {
    const hit = this.entries(context)?.get(file.absolute);
    return hit !== undefined && hit.size === file.size && hit.mtimeMs === file.mtimeMs && hit.path === file.path ? hit.value : undefined;
  }

  set(context: string, file: SourceFile, value: T): void {
    let entries = this.entries(context);
    if (entries === undefined) {
      if (this.contexts.size >= this.maxContexts) this.contexts.delete(this.contexts.keys().next().value!);
      this.contexts.set(context, (entries = new Map<string, Entry<T>>()));
    }
    entries.set(file.absolute, { path: file.path, size: file.size, mtimeMs: file.mtimeMs, value });
  }

  /** Drops the entries of files not in `present` (absolute paths), in every context. */
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
