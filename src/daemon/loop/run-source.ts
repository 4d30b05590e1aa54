/**
 * The source as a reconcile loop reads it: `promotion: auto`'s step before the fetch, a fetch
 * whose failure is logged (the last good commit stays applied), the newest snapshot with its files kept while it is the newest, and how many
 * commits the applied one is behind.
 */
import type { RunReport, RunResult } from "../../run/run-report.js";
import { ErrorCode, GatesyncError } from "../../errors.js";
import type { Logger } from "../../logger.js";
import type { Source, SourceSnapshot } from "../../source/source.js";
import { inFetchSpan } from "./run-span.js";
import type { ReconcilerOptions } from "./reconciler-options.js";

/** An environment waiting for its first promotion (promoted-source.ts): not broken, its runs end `waiting`. */
const waitsForPromotion = (err: unknown): boolean => err instanceof GatesyncError && err.code === ErrorCode.SOURCE_NOT_PROMOTED;

/**
 * The stray tags already warned of, per source (its description): once per tag per process — a
 * scheduled fetch every minute must not repeat it, a new stray tag is still said. Bounded: past
 * it, nothing more is remembered (and tags are warned of again rather than the set growing).
 */
const warnedTags = new Set<string>();
const maxWarnedTags = 10_000;

/** A stray tag is passed over, not followed: said once, as the track's version order holds. */
function warnSkippedTags(source: Source, snapshot: SourceSnapshot, log: Logger): void {
  for (const tag of snapshot.skippedTags ?? []) {
    const key = `${source.description}\0${tag}`;
    if (warnedTags.has(key)) continue;
    if (warnedTags.size >= maxWarnedTags) warnedTags.clear();
    warnedTags.add(key);
    log.warn(
      { tag, followed: snapshot.tag, source: source.description },
      "a tag that is not a semantic version is passed over: the newest version is followed",
    );
  }
}

/** The source's newest snapshot; a fetch that fails is logged and thrown. */
async function fetchLogged(source: Source, reason: string, log: Logger): Promise<SourceSnapshot> {
  try {
    const snapshot = await inFetchSpan(async () => source.fetch({ announced: reason === "webhook" }));
    warnSkippedTags(source, snapshot, log);
    return snapshot;
  } catch (err) {
    const code = err instanceof GatesyncError ? err.code : undefined;
    if (waitsForPromotion(err)) {
      log.info({ code, source: source.description }, "nothing promoted yet: the environment waits for its first promotion");
      throw err;
    }
    log.error(
      { err: (err as Error).message, ...(code === undefined ? {} : { code }), source: source.description },
      "source fetch failed; the last good commit stays applied",
    );
    throw err;
  }
}

/**
 * A run's two first steps: `promotion: auto` (promotion/auto-promotion.ts: the source environment's
 * newest candidate written as the promotion in force), then the fetch, which reads that promotion.
 * A failed step is logged and thrown as a failed fetch is: the run ends, the last good commit in force.
 */
export async function autoPromoteThenFetch(steps: Pick<ReconcilerOptions, "source" | "autoPromote">, reason: string, log: Logger): Promise<SourceSnapshot> {
  try {
    await steps.autoPromote?.();
  } catch (err) {
    log.error({ err: (err as Error).message }, "promotion: auto failed; the last good commit stays applied");
    throw err;
  }
  return fetchLogged(steps.source, reason, log);
}

/** How a run whose fetch failed ends: waiting for its first promotion, else a source error. */
export const endOnFetchFailure =
  (finish: (result: RunResult, extra: { error: string }) => RunReport) =>
  (err: unknown): RunReport =>
    finish(waitsForPromotion(err) ? "waiting" : "source-error", { error: (err as Error).message });

/** The newest snapshot a loop fetched: its files stay on disk until a newer one replaces it (the plan preview reads them). */
export class LatestSnapshot {
  private held: SourceSnapshot | undefined;
  private release: (() => void) | undefined;

  get snapshot(): SourceSnapshot | undefined {
    return this.held;
  }

  keep(snapshot: SourceSnapshot): void {
    const previous = this.release;
    this.release = snapshot.hold?.();
    this.held = snapshot;
    previous?.();
  }

  /** Lets go of the files (the loop stopped). */
  drop(): void {
    this.release?.();
    this.release = undefined;
  }
}

/**
 * gatesync_commits_behind, counted off the run's path: the count is one git process (a
 * webhook's run waited ~5 ms for it before planning), so the loop asks for it once a run that
 * did not apply the head ended, and the gauge is set when it comes; a count that arrives after a
 * newer one was noted (the run applied: 0) is dropped.
 */
export class CommitsBehind {
  private noted = 0;

  constructor(
    private readonly source: () => Source,
    private readonly set: (n: number) => void,
  ) {}

  /** Counts the fetched head's commits past the applied one, and sets the gauge when the count comes. */
  note(applied: string | undefined, head: string | undefined): void {
    if (head === undefined) return;
    const note = ++this.noted;
    void commitsBehind(this.source(), applied, head).then(
      (n) => {
        if (note === this.noted) this.set(n);
      },
      () => undefined,
    );
  }

  /** The head is applied: 0, at once. */
  applied(): void {
    this.noted++;
    this.set(0);
  }
}

/** Commits of the fetched head not applied yet: 0 once applied; 1 when the count is unknown. */
export async function commitsBehind(source: Source, applied: string | undefined, head: string): Promise<number> {
  if (applied === head) return 0;
  if (applied === undefined) return 1;
  return (await source.commitsBetween?.(applied, head)) ?? 1;
}
