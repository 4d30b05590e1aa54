/**
 * Where files are checked: on the calling thread, or spread over a pool of worker threads
 * (piscina) so that parsing and validating use every core. Both give the same verdicts; a
 * worker that dies is an error of the run, never a silently missing file.
 */
import { existsSync } from "node:fs";
import { availableParallelism } from "node:os";
import { fileURLToPath } from "node:url";
import PQueue from "p-queue";
import { Piscina } from "piscina";
import { InternalError } from "../errors.js";
import type { FileToRead } from "../load/read-file.js";
import { checkFile } from "./check-file.js";
import type { FileCheckContext, FileVerdict } from "./check-file.js";
import type { Checkers } from "./check-document.js";
import type { FileTask } from "./file-worker.js";

export interface WorkerOptions {
  /** Worker threads; 0 checks on the calling thread. Default: the cores available, none on one core. */
  readonly threads?: number;
  /** Fewer files to read than this are checked on the calling thread (starting workers costs more). */
  readonly minFiles?: number;
  /** Files per task sent to a worker. */
  readonly filesPerTask?: number;
  /** Per-worker memory limits (node's Worker resourceLimits). */
  readonly resourceLimits?: { readonly maxOldGenerationSizeMb?: number; readonly maxYoungGenerationSizeMb?: number };
}

export const defaultWorkerOptions = { minFiles: 200, filesPerTask: 16 } as const;

async function loadCheckers(): Promise<Checkers> {
  const [{ SchemaRegistry }, { OpenApiChecker }] = [await import("./schema-registry.js"), await import("./openapi.js")];
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
    return queue.addAll(files.map((f) => () => checkFile(f, ctx, checkers)));
  }
}

/** The worker module: compiled beside this file, or the TypeScript source run through tsx. */
function workerModule(): { filename: string; execArgv?: string[] } {
  const js = new URL("./file-worker.js", import.meta.url);
  if (existsSync(fileURLToPath(js))) return { filename: js.href };
  const ts = new URL("./file-worker.ts", import.meta.url);
  // workers inherit the parent's options: under `tsx` they load TypeScript already
  if (process.execArgv.some((a) => a.includes("tsx"))) return { filename: ts.href };
  return { filename: ts.href, execArgv: [...process.execArgv, "--import", import.meta.resolve("tsx")] };
}

/** Checks files on a pool of worker threads, started on first use. */
export class PooledFileChecker {
  private pool: Piscina | undefined;

  constructor(
    private readonly threads: number,
    private readonly opts: WorkerOptions,
  ) {}

  async check(files: readonly FileToRead[], ctx: FileCheckContext): Promise<FileVerdict[]> {
    const pool = (this.pool ??= this.startPool());
    const per = this.opts.filesPerTask ?? defaultWorkerOptions.filesPerTask;
    const tasks: Array<Promise<FileVerdict[]>> = [];
    for (let i = 0; i < files.length; i += per) {
      const task: FileTask = { files: files.slice(i, i + per), ctx };
      tasks.push(pool.run(task) as Promise<FileVerdict[]>);
    }
    // a worker that dies between tasks, or while starting, fails no task: the pool says so
    let onError: ((err: unknown) => void) | undefined;
    const failed = new Promise<never>((_, reject) => pool.once("error", (onError = reject)));
    try {
      // eslint-disable-next-line no-restricted-syntax -- bounded by the pool's threads: local work, no remote calls
      return (await Promise.race([Promise.all(tasks), failed])).flat();
    } catch (err) {
      // a pool whose workers died while starting never starts them again: the next run makes a new one
      if (this.pool === pool) this.pool = undefined;
      void pool.destroy().catch(() => undefined);
      throw new InternalError(`a file-checking worker failed: ${err instanceof Error ? err.message : String(err)}`, {
        hint: "the files were not all checked, so nothing was validated: see the cause, and report it if it is not the machine's memory",
        cause: err,
      });
    } finally {
      if (onError !== undefined) pool.off("error", onError);
      failed.catch(() => undefined);
      // let the rejected siblings of a failed task settle unobserved
      for (const t of tasks) t.catch(() => undefined);
    }
  }

  async close(): Promise<void> {
    const pool = this.pool;
    this.pool = undefined;
    await pool?.destroy();
  }

  private startPool(): Piscina {
    const { filename, execArgv } = workerModule();
    return new Piscina({
      filename,
      name: "checkFiles",
      minThreads: this.threads,
      maxThreads: this.threads,
      idleTimeout: 30_000,
      ...(execArgv === undefined ? {} : { execArgv }),
      ...(this.opts.resourceLimits === undefined ? {} : { resourceLimits: this.opts.resourceLimits }),
    });
  }
}

export function defaultThreads(): number {
  const cores = availableParallelism();
  return cores > 1 ? cores : 0;
}
