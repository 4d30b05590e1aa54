/**
 * The validator a command or the daemon keeps: checkers made once per thread, the worker pool,
 * and what was made of each file while it is unchanged (validation-run.ts runs one validation).
 */
import type { Spec } from "../../kinds/kind.js";
import type { SourceFile } from "../../load/list-files.js";
import type { FileCheckContext, FileVerdict } from "../file/check-file.js";
import { LocalFileChecker, PooledFileChecker, defaultThreads, defaultWorkerOptions } from "../file/file-pool.js";
import type { WorkerOptions } from "../file/file-pool.js";
import { ValidationRun } from "./validation-run.js";
import { KeptVerdicts, keysOf } from "./kept-verdicts.js";
import { ErrorCode } from "../../errors.js";
import { defaultBudget } from "../../rules/rule-thread.js";
import type { RepositoryResult, RunHost, ValidateOptions } from "./validation-run.js";

export type { RepositoryResult, ValidateOptions } from "./validation-run.js";

/** An attached document merged into its spec: the same object while both are unchanged. */
type MergedSpecs = WeakMap<object, { readonly definition: unknown; readonly spec: Spec }>;

/**
 * Reusable across runs: checkers are made once (per thread), and what was made of each
 * file is kept while the file is unchanged, so the daemon's runs after a one-file change
 * check one file.
 */
export class RepositoryValidator implements RunHost {
  private readonly local = new LocalFileChecker();
  private readonly pool: PooledFileChecker | undefined;
  private readonly minFiles: number;
  private readonly stopWhenChecked: boolean;
  private readonly kept = new KeptVerdicts();
  private readonly merged: MergedSpecs = new WeakMap();

  /** Keep what was made of each file for the next run (the daemon); a one-shot command does not. */
  private readonly reuse: boolean;

  /** Validations under way: when each started, and how long it may take. */
  private readonly underway = new Set<{ readonly since: number; readonly limitMs: number }>();

  constructor(opts: { readonly workers?: WorkerOptions; readonly reuse?: boolean } = {}) {
    this.reuse = opts.reuse ?? true;
    const callerChecks = opts.workers?.callerChecks === true;
    const threads = opts.workers?.threads ?? defaultThreads(callerChecks);
    this.pool = threads > 0 ? new PooledFileChecker(threads, opts.workers ?? {}, callerChecks ? () => this.local.checkers() : undefined) : undefined;
    this.minFiles = opts.workers?.minFiles ?? defaultWorkerOptions.minFiles;
    this.stopWhenChecked = opts.workers?.stopWhenChecked === true;
  }

  /**
   * For a one-shot command (validate, plan, apply), whose event loop has nothing else to do:
   * the calling thread checks files beside one worker fewer — a worker isolate's memory saved
   * for the same cores — the workers stop once the files are checked, and nothing is kept for
   * a next run. The daemon keeps the default (all workers, kept): its loop stays free for /healthz.
   */
  static oneShot(): RepositoryValidator {
    return new RepositoryValidator({ workers: { callerChecks: true, stopWhenChecked: true }, reuse: false });
  }

  async validate(opts: ValidateOptions): Promise<RepositoryResult> {
    const entry = { since: Date.now(), limitMs: validationLimitMs(opts) };
    this.underway.add(entry);
    try {
      return await new ValidationRun(opts, this).execute();
    } finally {
      this.underway.delete(entry);
    }
  }

  /**
   * A validation under way past its limit (validationLimitMs), or undefined: the daemon's
   * /healthz says it is stuck.
   */
  overdue(now = Date.now()): { readonly forMs: number; readonly limitMs: number } | undefined {
    for (const { since, limitMs } of this.underway) if (now - since > limitMs) return { forMs: now - since, limitMs };
    return undefined;
  }

  /** Stops the worker threads (idle ones do not keep the process alive either). */
  async close(): Promise<void> {
    await this.pool?.close();
  }

  /**
   * @internal The verdicts of files: kept ones where unchanged, the rest checked now — a file
   * another environment's run is checking meanwhile is waited for, not checked twice.
   */
  async verdicts(files: readonly SourceFile[], ctx: FileCheckContext): Promise<{ verdicts: FileVerdict[]; read: number }> {
    const keys = keysOf(ctx);
    const verdicts = this.reuse ? await this.kept.lookup(files, keys) : files.map(() => undefined);
    const missing = files.flatMap((_, i) => (verdicts[i] === undefined ? [i] : []));
    const claim = this.reuse
      ? this.kept.claim(
          missing.map((i) => files[i]!),
          keys,
        )
      : undefined;
    let read = 0;
    const checkNow = async (indexes: readonly number[], settle?: (at: number, v: FileVerdict) => void): Promise<void> => {
      const checker = this.pool !== undefined && indexes.length >= this.minFiles ? this.pool : this.local;
      const fresh = await checker.check(
        indexes.map((i) => files[i]!),
        ctx,
      );
      read += indexes.length;
      indexes.forEach((i, k) => {
        const v = fresh[k]!;
        verdicts[i] = v;
        // an unreadable file may become readable without changing size or time; rules stopped past
        // their budget (a loaded machine, too) may finish next time: neither verdict is kept (nor lent)
        const kept = this.reuse && !v.diagnostics.some((d) => d.code === "FILE_READ") && !rulesStopped(v);
        if (kept) this.kept.keep(files[i]!, v, keys);
        settle?.(k, v);
      });
    };
    if (claim === undefined) {
      await checkNow(missing);
      return { verdicts: verdicts as FileVerdict[], read };
    }
    try {
      const mine = claim.mine.map((k) => missing[k]!);
      await checkNow(mine, (k, v) => claim.settle(claim.mine[k]!, keptOrNot(v)));
    } finally {
      claim.release();
    }
    const left: number[] = [];
    for (const [k, theirs] of claim.theirs) {
      const v = await theirs;
      if (v === undefined) left.push(missing[k]!);
      else verdicts[missing[k]!] = v;
    }
    if (left.length > 0) await checkNow(left);
    return { verdicts: verdicts as FileVerdict[], read };
  }

  /**
   * @internal Files are being listed and `found` so far: once they are enough for the pool, its
   * workers start while the rest is listed (one core busy listing, the other loading checkers).
   * Files kept from an earlier run are not counted out: a daemon's pool is started once and kept.
   */
  listing(found: number): void {
    if (found >= this.minFiles) this.pool?.start();
  }

  /** @internal Every file of the run is checked (`present`: their paths): files no longer present are forgotten; one-shot workers stop. */
  async checked(present: ReadonlySet<string>): Promise<void> {
    this.kept.retain(present);
    if (this.stopWhenChecked) await this.pool?.close();
  }

  /** @internal Kept for the next run (the daemon), or held compactly for this one (see FileCheckContext.compact). */
  get reusing(): boolean {
    return this.reuse;
  }

  /** @internal The worker pool, when there is one. */
  get workers(): PooledFileChecker | undefined {
    return this.pool;
  }

  /** @internal */
  get checkers(): LocalFileChecker {
    return this.local;
  }

  /** @internal The spec with its document: the same object as last time while both are. */
  mergedSpec(spec: Spec, document: unknown, attach: (spec: Spec, document: unknown) => Spec): Spec {
    let merged = this.merged.get(spec);
    if (merged === undefined || merged.definition !== document) {
      merged = { definition: document, spec: attach(spec, document) };
      this.merged.set(spec, merged);
    }
    return merged.spec;
  }
}

/**
 * How long a validation may take before it counts as stuck: the rules' budget for the run
 * (rule-thread.ts; a document's budget ends at the run's deadline too), and as long again, up
 * to a minute, for everything else.
 */
function validationLimitMs(opts: ValidateOptions): number {
  const runMs = opts.rules?.budget.runMs ?? defaultBudget.runMs;
  return runMs + Math.min(runMs, 60_000);
}

/** A verdict another run may take: one that is kept. */
function keptOrNot(v: FileVerdict): FileVerdict | undefined {
  return v.diagnostics.some((d) => d.code === "FILE_READ") || rulesStopped(v) ? undefined : v;
}

/** Whether a file's rules were stopped past their budget (RULE_TIMEOUT) on any of its documents. */
function rulesStopped(verdict: FileVerdict): boolean {
  const stopped = (findings: readonly { readonly code: string }[]): boolean => findings.some((f) => f.code === ErrorCode.RULE_TIMEOUT);
  return verdict.documents.some((d) => stopped(d.findings) || (d.attachment !== undefined && stopped(d.attachment.findings)));
}
