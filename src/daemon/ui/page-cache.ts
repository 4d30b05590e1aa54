/**
 * What keeps the status page and /status cheap under load: every GET once read the whole
 * state (twice: once for the plan preview's key) and drew the page anew — ~1.5 s of the only
 * thread and 4 MB per GET /resources at 10,000 resources — with no bound on how many at once.
 *
 * - `CachedState`: one snapshot of the state, shared by every reader, read again when a run has
 *   finished since (the daemon's runs are its only writer) or when it is older than `maxAgeMs()`
 *   counted from when the read ended (short while a run is in progress; long otherwise, for
 *   `gatesync state` commands run from outside). Concurrent readers share one read.
 * - `RenderedPages`: each page drawn once per snapshot and plan preview, kept as the bytes to
 *   send (a bounded number of them), and at most `maxRenders` drawn at once: past that a client
 *   is answered 503 with Retry-After at once instead of queueing work on the only thread. Slow
 *   clients given the same page share one buffer.
 */
import type { StateSnapshot, StateVersion } from "../../record/state.js";

interface Cached<T> {
  at: number;
  readonly key: string;
  readonly value: Promise<T>;
}

export class CachedState {
  private cached: Cached<StateSnapshot> | undefined;
  private cachedVersion: Cached<StateVersion> | undefined;

  constructor(
    private readonly state: { read(): Promise<StateSnapshot>; readVersion(): Promise<StateVersion>; readonly description: string },
    /** Changes when the state may have changed (a run finished). */
    private readonly key: () => string,
    private readonly maxAgeMs: () => number = () => 2_000,
  ) {}

  get description(): string {
    return this.state.description;
  }

  read(): Promise<StateSnapshot> {
    this.cached = this.fresh(
      this.cached,
      () => this.state.read(),
      (failed) => {
        if (this.cached === failed) this.cached = undefined;
      },
    );
    return this.cached.value;
  }

  /**
   * The state's lineage and serial (the /status of every environment: no record is read): the
   * snapshot's while it is fresh, else read alone and kept alike.
   */
  version(): Promise<StateVersion> {
    const snapshot = this.cached;
    if (snapshot !== undefined && this.isFresh(snapshot)) return snapshot.value;
    this.cachedVersion = this.fresh(
      this.cachedVersion,
      () => this.state.readVersion(),
      (failed) => {
        if (this.cachedVersion === failed) this.cachedVersion = undefined;
      },
    );
    return this.cachedVersion.value;
  }

  private isFresh(entry: Cached<unknown>): boolean {
    return entry.key === this.key() && performance.now() - entry.at <= this.maxAgeMs();
  }

  /** `entry` while fresh, else a new read (`drop` forgets it if it fails: a failed read is not kept, the next reader tries again). */
  private fresh<T>(entry: Cached<T> | undefined, read: () => Promise<T>, drop: (failed: Cached<T>) => void): Cached<T> {
    if (entry !== undefined && this.isFresh(entry)) return entry;
    const value = read();
    // aged from when the read ends (Infinity while it is under way: it is shared, not repeated)
    const next: Cached<T> = { at: Number.POSITIVE_INFINITY, key: this.key(), value };
    value.then(
      () => (next.at = performance.now()),
      () => drop(next),
    );
    return next;
  }
}

export interface Rendered {
  readonly status: number;
  readonly body: Buffer;
  /** Names this drawing of the page (sent as its ETag): a page served from the cache keeps it. */
  readonly etag?: string;
}

/** Too many pages are being drawn at once: answer 503 and let the client come back. */
export class TooBusy extends Error {}

export class RenderedPages {
  private readonly pages = new Map<string, { readonly basis: readonly unknown[]; readonly page: Promise<Rendered> }>();
  private drawing = 0;
  /** Pages drawn so far: each drawing's ETag. */
  private drawings = 0;

  constructor(
    private readonly maxRenders = 2,
    private readonly maxPages = 64,
  ) {}

  /**
   * The page at `url` drawn from `basis` (the objects it is drawn from: the same ones give the
   * same page), from the cache or drawn now — unless `maxRenders` are being drawn (TooBusy).
   */
  get(url: string, basis: readonly unknown[], draw: () => Promise<Rendered>): Promise<Rendered> {
    const hit = this.pages.get(url);
    if (hit !== undefined && hit.basis.length === basis.length && hit.basis.every((b, i) => b === basis[i])) return hit.page;
    if (this.drawing >= this.maxRenders) return Promise.reject(new TooBusy());
    this.drawing++;
    const drawing = ++this.drawings;
    const page = draw()
      .then((r) => ({ ...r, etag: `W/"page-${drawing}"` }))
      .finally(() => this.drawing--);
    this.pages.delete(url);
    if (this.pages.size >= this.maxPages) this.pages.delete(this.pages.keys().next().value!);
    const entry = { basis, page };
    this.pages.set(url, entry);
    page.catch(() => {
      if (this.pages.get(url) === entry) this.pages.delete(url);
    });
    return page;
  }
}
