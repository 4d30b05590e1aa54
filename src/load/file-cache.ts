/**
 * What was made of each file, kept between runs while the file is unchanged (same size and
 * modification time) and made under the same settings: the daemon's runs after a one-file
 * change read one file.
 */
import type { SourceFile } from "./list-files.js";

export class FileCache<T> {
  private readonly entries = new Map<string, { readonly path: string; readonly size: number; readonly mtimeMs: number; readonly value: T }>();
  private context = "";

  /** Forgets everything when the settings the entries were made under change. */
  useContext(context: string): void {
    if (context !== this.context) this.entries.clear();
    this.context = context;
  }

  get(file: SourceFile): T | undefined {
    const hit = this.entries.get(file.absolute);
    return hit !== undefined && hit.size === file.size && hit.mtimeMs === file.mtimeMs && hit.path === file.path ? hit.value : undefined;
  }

  set(file: SourceFile, value: T): void {
    this.entries.set(file.absolute, { path: file.path, size: file.size, mtimeMs: file.mtimeMs, value });
  }

  /** Drops the entries of files not in `present` (absolute paths). */
  retain(present: ReadonlySet<string>): void {
    for (const key of this.entries.keys()) if (!present.has(key)) this.entries.delete(key);
  }
}
