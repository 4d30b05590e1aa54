/**
 * A local directory as the source, for working against the sandbox. Its revision is a
 * fingerprint of the files' paths, sizes and modification times; with watching on, chokidar
 * reports changes (debounced; editors' atomic saves come out as one change).
 */
import { createHash } from "node:crypto";
import path from "node:path";
import { watch as chokidarWatch } from "chokidar";
import type { FSWatcher } from "chokidar";
import { listResourceFiles } from "../load/list-files.js";
import type { Source, SourceSnapshot } from "./source.js";

export class LocalSource implements Source {
  readonly description: string;
  private watcher: FSWatcher | undefined;
  private timer: NodeJS.Timeout | undefined;

  constructor(
    private readonly directory: string,
    private readonly opts: { readonly debounceMs?: number; readonly maxFiles?: number; readonly watch?: boolean } = {},
  ) {
    this.description = `directory ${directory}`;
  }

  async fetch(): Promise<SourceSnapshot> {
    const { root, files } = await listResourceFiles({ root: this.directory, maxFiles: this.opts.maxFiles ?? 50_000 });
    const hash = createHash("sha256");
    // the listing has stat'ed every file already
    for (const f of files) hash.update(`${f.path}\0${f.size}\0${f.mtimeMs}\n`);
    return { root, boundary: root, revision: `dir:${hash.digest("hex").slice(0, 16)}` };
  }

  watch(onChange: () => void): void {
    if (this.opts.watch !== true) return;
    const debounce = this.opts.debounceMs ?? 300;
    this.watcher = chokidarWatch(this.directory, {
      ignoreInitial: true,
      ignored: (p: string) => path.basename(p).startsWith(".") && p !== this.directory,
      atomic: true,
      awaitWriteFinish: { stabilityThreshold: 100, pollInterval: 25 },
    });
    const fire = (): void => {
      if (this.timer !== undefined) clearTimeout(this.timer);
      this.timer = setTimeout(onChange, debounce);
    };
    this.watcher.on("all", fire);
  }

  async close(): Promise<void> {
    if (this.timer !== undefined) clearTimeout(this.timer);
    await this.watcher?.close();
  }
}
