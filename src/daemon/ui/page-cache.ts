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
import type { StateSnapshot } from "../../record/state.js";

export class CachedState {
  private cached: { at: number; readonly key: string; readonly value: Promise<StateSnapshot> } | undefined;

  constructor(
    private readonly state: { read(): Promise<StateSnapshot>; readonly description: string },
    /** Changes when the state may have changed (a run finished). */
    private readonly key: () => string,
    private readonly maxAgeMs: () => number = () => 2_000,
  ) {}

  get description(): string {
    return this.state.description;
  }

  read(): Promise<StateSnapshot> {
    const key = this.key();
    const now = performance.now();
    if (this.cached === undefined || this.cached.key !== key || now - this.cached.at > this.maxAgeMs()) {
      const value = this.state.read();
      // aged from when the read ends (Infinity while it is under way: it is shared, not repeated)
      const entry = { at: Number.POSITIVE_INFINITY, key, value };
      this.cached = entry;
      value.then(
        () => (entry.at = performance.now()),
        () => {
          // a failed read is not kept: the next reader tries again
          if (this.cached === entry) this.cached = undefined;
        },
      );
    }
    return this.cached.value;
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
