/**
 * Where files are checked: on the calling thread, or spread over a pool of worker threads
 * (piscina) so that parsing and validating use every core — with the calling thread checking
 * its share too when it has nothing else to do (a one-shot command): one worker isolate fewer
 * (each holds its own heap, compiled checkers and garbage) for the same cores. All give the
 * same verdicts, in file order; a worker that dies is an error of the run, never a silently
 * missing file.
 */
import { availableParallelism } from "node:os";
import { setImmediate as nextTurn } from "node:timers/promises";
import PQueue from "p-queue";
import type { Piscina } from "piscina";
import { InternalError } from "../../errors.js";
import { workerModule } from "../../worker-module.js";
import type { FileToRead } from "../../load/read-file.js";
import { checkFile } from "./check-file.js";
import type { FileCheckContext, FileVerdict } from "./check-file.js";
import type { Checkers } from "../document/check-document.js";
import type { FileTask } from "./file-worker.js";

export interface WorkerOptions {
  /**
   * Worker threads; 0 checks on the calling thread. Default: the cores available (less the
   * calling thread's with `callerChecks`), none on one core.
   */
  readonly threads?: number;
  /**
   * The calling thread checks files too, between workers' results: for one-shot commands,
   * whose event loop has nothing else to serve. Not for the daemon, whose loop answers /healthz.
   */
  readonly callerChecks?: boolean;
  /**
   * The workers stop once a run's files are checked (a one-shot command: their heaps are freed
   * before what follows — the rest of the validation, the plan, the apply); a later run starts
   * them again.
   */
  readonly stopWhenChecked?: boolean;
  /** Fewer files to read than this are checked on the calling thread (starting workers costs more). */
  readonly minFiles?: number;
  /** Files per task sent to a worker. */
  readonly filesPerTask?: number;
  /** Per-worker memory limits (node's Worker resourceLimits). */
  readonly resourceLimits?: { readonly maxOldGenerationSizeMb?: number; readonly maxYoungGenerationSizeMb?: number };
}

export const defaultWorkerOptions = { minFiles: 200, filesPerTask: 16 } as const;

/** The checkers' modules (the compiled schemas) are loaded by the threads that check. */
async function loadCheckers(): Promise<Checkers> {
  const { SchemaRegistry } = await import("../schema/schema-registry.js");
  const { OpenApiChecker } = await import("../document/openapi.js");
  return { schemas: new SchemaRegistry(), openapi: new OpenApiChecker() };
}

/** Checks files on the calling thread. */
export class LocalFileChecker {
  private loaded: Promise<Checkers> | undefined;

  /**
   * The calling thread's checkers (also for the few checks made after the files'), loaded on
   * first use: a thread whose files all go to the pool does not load the compiled schemas.
   */
  async checkers(): Promise<Checkers> {
    return (this.loaded ??= loadCheckers());
  }

  async check(files: readonly FileToRead[], ctx: FileCheckContext): Promise<FileVerdict[]> {
    const checkers = await this.checkers();
    const queue = new PQueue({ concurrency: 32 });
    // a file held in memory (read-file.ts HeldFile) holds its writer's values, no parser's substrings: nothing to detach
    return queue.addAll(files.map((f) => async () => (f.held === undefined ? detached(await checkFile(f, ctx, checkers)) : checkFile(f, ctx, checkers))));
  }
}

/**
 * A verdict made on the calling thread, copied as a worker's arrives (structured clone): its
 * values then own their strings — a parser's substrings would keep each file's whole text
 * alive as long as the resource (tens of MB at 100,000 resources) — and it is the same value
 * whichever thread checked the file.
 */
function detached(verdict: FileVerdict): FileVerdict {
  return structuredClone(verdict);
}

interface Task {
  /** Its place in file order. */
  readonly at: number;
  readonly files: readonly FileToRead[];
}

/**
 * Files cut into tasks of a few tens of milliseconds each (up to `per` files, and up to
 * `bytesPerTask` bytes), those of the largest files first: workers take them from the front, the
 * calling thread from the back. No thread is left waiting long for another's last task, and the
 * calling thread — which takes a turn of its event loop after each file, for the workers'
 * results — checks many small files while the workers check the big OpenAPI documents
 * (measured: `validate` of the realistic 10,000 resources ~2% faster than both ends taking the
 * largest first, 15 interleaved runs each).
 */
function tasksOf(files: readonly FileToRead[], per: number): Task[] {
  const tasks: Array<Task & { readonly bytes: number }> = [];
  let some: FileToRead[] = [];
  let bytes = 0;
  for (const file of files) {
    some.push(file);
    bytes += file.size;
    // a task of big documents holds fewer: the last tasks to finish are short whatever their files
    if (some.length < per && bytes < bytesPerTask) continue;
    tasks.push({ at: tasks.length, files: some, bytes });
    some = [];
    bytes = 0;
  }
  if (some.length > 0) tasks.push({ at: tasks.length, files: some, bytes });
  const perFile = (t: Task & { readonly bytes: number }): number => t.bytes / t.files.length;
  return tasks.sort((a, b) => perFile(b) - perFile(a) || a.at - b.at);
}

/** The file bytes of a task, at most (or one file more than): some tens of milliseconds of checking. */
const bytesPerTask = 64 * 1024;

/**
 * One run's tasks, each thread taking the next when done with its last: a worker's result,
 * and so its next task, waits at most for the file the calling thread is checking.
 */
class Dispatch {
  readonly verdicts: FileVerdict[][] = [];
  readonly counts = { onCaller: 0, inWorkers: 0 };
  /** What the calling thread's own checks threw (as it would without workers). */
  callerFailed: { readonly err: unknown } | undefined;
  stopped = false;
  /** The first and the last of the tasks no thread has taken. */
  private next = 0;
  private last: number;

  constructor(
    private readonly tasks: readonly Task[],
    private readonly ctx: FileCheckContext,
  ) {
    this.last = tasks.length - 1;
  }

  async viaWorker(pool: Piscina): Promise<void> {
    const send = (t: Task): Promise<FileVerdict[]> => pool.run({ files: t.files, ctx: this.ctx } satisfies FileTask) as Promise<FileVerdict[]>;
    let t = this.take();
    let running = t === undefined ? undefined : send(t);
    while (t !== undefined && running !== undefined) {
      const done = await running;
      // the worker's next task is sent before anything else is done with this one's verdicts
      const next = this.take();
      running = next === undefined ? undefined : send(next);
      this.verdicts[t.at] = done;
      this.counts.inWorkers += t.files.length;
      t = next;
    }
  }

  async onCaller(load: () => Promise<Checkers>): Promise<void> {
    try {
      const checkers = await load();
      for (let t = this.take("smallest"); t !== undefined; t = this.take("smallest")) {
        const done: FileVerdict[] = [];
        for (const file of t.files) {
          done.push(detached(await checkFile(file, this.ctx, checkers, true)));
          // the workers' results and next tasks pass through this thread's event loop
          await nextTurn();
        }
        this.verdicts[t.at] = done;
        this.counts.onCaller += t.files.length;
      }
    } catch (err) {
      this.callerFailed = { err };
      throw err;
    }
  }

  private take(end: "largest" | "smallest" = "largest"): Task | undefined {
    if (this.stopped || this.next > this.last) return undefined;
    return end === "largest" ? this.tasks[this.next++] : this.tasks[this.last--];
  }
}

/**
 * Tasks a worker holds at once: it checks them one after the other, and the second spares it
 * the wait for its next — a worker's result passes through the calling thread's event loop,
 * busy with a file of its own (profiles showed a worker idle up to a fifth of the time with one).
 */
const tasksPerWorker = 2;

/** Checks files on a pool of worker threads, started on first use; with `caller`, on the calling thread too. */
export class PooledFileChecker {
  private pool: Promise<Piscina> | undefined;
  /** What the pool reported while no run was listening (a worker dying as it starts, before the run's files are listed). */
  private unheard: { readonly err: unknown } | undefined;
  /** @internal Files the last run checked on the calling thread and in workers. */
  lastRun: { readonly onCaller: number; readonly inWorkers: number } = { onCaller: 0, inWorkers: 0 };

  /** `caller`: the calling thread's checkers, when it checks files too. */
  constructor(
    private readonly threads: number,
    private readonly opts: WorkerOptions,
    private readonly caller?: () => Promise<Checkers>,
  ) {}

  async check(files: readonly FileToRead[], ctx: FileCheckContext): Promise<FileVerdict[]> {
    const starting = (this.pool ??= this.startPool());
    const pool = await starting;
    const run = new Dispatch(tasksOf(files, this.opts.filesPerTask ?? defaultWorkerOptions.filesPerTask), ctx);
    this.lastRun = run.counts;
    // two tasks in flight per worker: its next waits in its queue, not for this thread's event loop
    const lanes = [
      ...Array.from({ length: this.threads * tasksPerWorker }, () => run.viaWorker(pool)),
      ...(this.caller === undefined ? [] : [run.onCaller(this.caller)]),
    ];
    // a worker that dies between tasks, or while starting, fails no task: the pool says so
    let onError: ((err: unknown) => void) | undefined;
    const failed = new Promise<never>((_, reject) => {
      const early = this.unheard?.err;
      if (early !== undefined) reject(early instanceof Error ? early : new Error("a file-checking worker failed", { cause: early }));
      pool.once("error", (onError = reject));
    });
    try {
      // eslint-disable-next-line no-restricted-syntax -- bounded by the pool's threads: local work, no remote calls
      await Promise.race([Promise.all(lanes), failed]);
      return run.verdicts.flat();
    } catch (err) {
      run.stopped = true;
      if (run.callerFailed !== undefined && run.callerFailed.err === err) throw err;
      // a pool whose workers died while starting never starts them again: the next run makes a new one
      if (this.pool === starting) {
        this.pool = undefined;
        this.unheard = undefined;
      }
      void pool.destroy().catch(() => undefined);
      throw new InternalError(`a file-checking worker failed: ${err instanceof Error ? err.message : String(err)}`, {
        hint: "the files were not all checked, so nothing was validated: see the cause, and report it if it is not the machine's memory",
        cause: err,
      });
    } finally {
      if (onError !== undefined) pool.off("error", onError);
      failed.catch(() => undefined);
      // let the rejected siblings of a failed task settle unobserved
      for (const lane of lanes) lane.catch(() => undefined);
    }
  }

  /**
   * Starts the worker threads now, before a run's files are known: they load their modules
   * (compiled schemas, validators: a few hundred milliseconds) while the calling thread still
   * lists files. A pool that fails to start fails the run that uses it.
   */
  start(): void {
    if (this.pool !== undefined) return;
    this.pool = this.startPool();
    this.pool.catch(() => undefined);
  }

  /** Whether worker threads are started (or starting). */
  get running(): boolean {
    return this.pool !== undefined;
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await (await pool)?.destroy();
  }

  /** piscina is loaded with the first pool: a run of few files, checked on the calling thread, never loads it. */
  private async startPool(): Promise<Piscina> {
    const { Piscina } = await import("piscina");
    const { filename, execArgv } = workerModule(import.meta.url, "file-worker");
    const pool = new Piscina({
      filename,
      name: "checkFiles",
      minThreads: this.threads,
      maxThreads: this.threads,
      concurrentTasksPerWorker: tasksPerWorker,
      idleTimeout: 30_000,
      ...(execArgv === undefined ? {} : { execArgv }),
      ...(this.opts.resourceLimits === undefined ? {} : { resourceLimits: this.opts.resourceLimits }),
    });
    // started early (`start`), a pool may fail before a run listens: the run then fails with it
    pool.on("error", (err: unknown) => (this.unheard ??= { err }));
    return pool;
  }
}

/** Worker threads by default: one per core (less the calling thread's, when it checks too), none on one core. */
export function defaultThreads(callerChecks = false): number {
  const cores = availableParallelism();
  return cores > 1 ? cores - (callerChecks ? 1 : 0) : 0;
}
