/**
 * What keeps the status page cheap under load: each page drawn once per snapshot of the state
 * (views/cached-state.ts) and plan preview, kept as the bytes to send (a bounded number of them),
 * and at most `maxRenders` drawn at once: past that a client is answered 503 with Retry-After at
 * once instead of queueing work on the only thread (a page once cost ~1.5 s of it and 4 MB per
 * GET /resources at 10,000 resources). Slow clients given the same page share one buffer.
 */
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
