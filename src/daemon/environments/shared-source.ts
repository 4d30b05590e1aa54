/**
 * One source shared by the environments of a daemon, fetched once for all of them. A fetch asked
 * for while one is under way shares it, and a snapshot younger than `reuseMs` is handed out
 * again — the environments of one trigger see the same commit — unless a trigger (webhook, sync,
 * file change) said the source moved since. Each run holds its revision's files (SourceSnapshot.hold):
 * the environments run side by side (run-slots.ts), and a fetch never moves the files a run reads.
 */
import { ErrorCode, SourceError } from "../../errors.js";
import type { FetchRequest, Source, SourceSnapshot } from "../../source/source.js";

export class SharedSource implements Source {
  readonly description: string;
  private last: { readonly snapshot: SourceSnapshot; readonly at: number } | undefined;
  private inFlight: Promise<SourceSnapshot> | undefined;
  private stale = true;
  private readonly listeners: Array<() => void> = [];

  constructor(
    private readonly inner: Source,
    private readonly reuseMs = 2_000,
  ) {
    this.description = inner.description;
  }

  /** The source may have moved: the next fetch asks it. */
  invalidate(): void {
    this.stale = true;
  }

  fetch(request: FetchRequest = {}): Promise<SourceSnapshot> {
    if (this.inFlight !== undefined) return this.inFlight;
    const last = this.last;
    if (!this.stale && last !== undefined && performance.now() - last.at < this.reuseMs) return Promise.resolve(last.snapshot);
    this.stale = false;
    const fetching = this.inner.fetch(request).then(
      (snapshot) => {
        this.last = { snapshot, at: performance.now() };
        return snapshot;
      },
      (err: unknown) => {
        this.stale = true;
        throw err;
      },
    );
    this.inFlight = fetching.finally(() => (this.inFlight = undefined));
    return this.inFlight;
  }

  watch(onChange: () => void): void {
    this.listeners.push(onChange);
    if (this.listeners.length > 1) return;
    this.inner.watch?.(() => {
      this.invalidate();
      for (const l of this.listeners) l();
    });
  }

  /** A commit's files: the revision in force of an environment promoted from another (promoted-source.ts). */
  at(commit: string): Promise<SourceSnapshot> {
    if (this.inner.at === undefined)
      return Promise.reject(new SourceError(ErrorCode.SOURCE_INVALID, `${this.description} has no commits: promotion needs a git source`));
    return this.inner.at(commit);
  }

  commitsBetween(from: string, to: string): Promise<number | undefined> {
    return this.inner.commitsBetween?.(from, to) ?? Promise.resolve(undefined);
  }

  /** Each environment's loop closes its source when it stops: the shared one closes with the daemon (`closeShared`). */
  close(): Promise<void> {
    return Promise.resolve();
  }

  closeShared(): Promise<void> {
    return this.inner.close();
  }
}
