/**
 * What keeps /status, the pages and the plan preview cheap under load: every GET once read the
 * whole state (twice: once for the plan preview's key) — ~1.5 s of the only thread at 10,000
 * resources. `CachedState` is one snapshot of the state, shared by every reader, read again when
 * a run has finished since (the daemon's runs are its only writer) or when it is older than
 * `maxAgeMs()` counted from when the read ended (short while a run is in progress; long
 * otherwise, for `gatesync state` commands run from outside). Concurrent readers share one read.
 */
import type { StateSnapshot, StateVersion } from "../../record/state.js";

interface Cached<T> {
  at: number;
  /** A version a standby's heads read told (noteVersion): it stands until then, whatever `maxAgeMs`. */
  readonly until?: number;
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

  /**
   * The version as a standby's heads read found it (standby-heads.ts, with every other followed
   * environment's): kept as a read of its own, unless a read of its own is under way.
   */
  noteVersion(version: StateVersion, validMs: number): void {
    if (this.cachedVersion !== undefined && this.cachedVersion.at === Number.POSITIVE_INFINITY) return;
    const at = performance.now();
    this.cachedVersion = { at, until: at + validMs, key: this.key(), value: Promise.resolve(version) };
  }

  private isFresh(entry: Cached<unknown>): boolean {
    const now = performance.now();
    return entry.key === this.key() && (now - entry.at <= this.maxAgeMs() || now < (entry.until ?? Number.NEGATIVE_INFINITY));
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
