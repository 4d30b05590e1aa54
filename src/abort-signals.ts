/**
 * Abort signals derived from long-lived ones without leaving anything on them. On Node 20,
 * `AbortSignal.any` keeps in each source a weak reference to every signal it ever made, never
 * pruned: a source that lives as long as the daemon (its shutdown signal, a notifier's) grows
 * with each run and each delivery. And a listener per waiting call on a shared signal (1,000
 * queued calls: 1,000 listeners, with Node's MaxListenersExceededWarning) is one per signal here.
 */

export interface LinkedSignal {
  /** Aborted, with the source's reason, when any source is. */
  readonly signal: AbortSignal;
  /** Removes its listeners from the sources: call it when the work it guards ends. */
  readonly unlink: () => void;
}

/** A signal aborted when any of `sources` is, until `unlink`. */
export function linkedSignal(sources: readonly AbortSignal[]): LinkedSignal {
  const controller = new AbortController();
  const onAbort = (event: Event): void => {
    unlink();
    controller.abort((event.target as AbortSignal).reason);
  };
  const unlink = (): void => {
    for (const s of sources) s.removeEventListener("abort", onAbort);
  };
  const aborted = sources.find((s) => s.aborted);
  if (aborted !== undefined) controller.abort(aborted.reason);
  else for (const s of sources) s.addEventListener("abort", onAbort, { once: true });
  return { signal: controller.signal, unlink };
}

/** Callbacks run once when their signal aborts: one listener per signal, however many wait on it. */
export class AbortWaiters {
  private readonly bySignal = new Map<AbortSignal, { readonly listener: () => void; readonly callbacks: Set<() => void> }>();

  /** Runs `callback` when any of `signals` aborts (at once if one has); returns its removal. */
  add(signals: readonly AbortSignal[], callback: () => void): () => void {
    const removals = signals.map((s) => this.addOne(s, callback));
    if (signals.some((s) => s.aborted)) callback();
    return () => removals.forEach((remove) => remove());
  }

  private addOne(signal: AbortSignal, callback: () => void): () => void {
    let entry = this.bySignal.get(signal);
    if (entry === undefined) {
      const callbacks = new Set<() => void>();
      const listener = (): void => {
        this.bySignal.delete(signal);
        for (const cb of [...callbacks]) cb();
      };
      entry = { listener, callbacks };
      this.bySignal.set(signal, entry);
      signal.addEventListener("abort", listener, { once: true });
    }
    const { listener, callbacks } = entry;
    callbacks.add(callback);
    return () => {
      callbacks.delete(callback);
      if (callbacks.size > 0 || this.bySignal.get(signal)?.callbacks !== callbacks) return;
      this.bySignal.delete(signal);
      signal.removeEventListener("abort", listener);
    };
  }
}
