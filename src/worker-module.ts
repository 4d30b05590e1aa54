/**
 * Where a worker thread's module is: compiled beside the module that starts it (dist/, or the
 * bundle's dist/bundle/, which has an entry of each worker's name), or its TypeScript source
 * run through tsx (tests, `gatesync` from sources).
 */
import { existsSync } from "node:fs";
import { fileURLToPath } from "node:url";
import { Worker } from "node:worker_threads";
import type { WorkerOptions } from "node:worker_threads";

/** `name` beside `from` (the starting module's `import.meta.url`): `file-worker` for `./file-worker.js`. */
export function workerModule(from: string, name: string): { filename: string; execArgv?: string[] } {
  const js = new URL(`./${name}.js`, from);
  if (existsSync(fileURLToPath(js))) return { filename: js.href };
  const ts = new URL(`./${name}.ts`, from);
  // workers inherit the parent's options: under `tsx` they load TypeScript already
  if (process.execArgv.some((a) => a.includes("tsx"))) return { filename: ts.href };
  return { filename: ts.href, execArgv: [...process.execArgv, "--import", import.meta.resolve("tsx")] };
}

/**
 * A worker thread of module `name` beside `from`. From TypeScript sources, the worker registers
 * tsx's loader itself before importing the module: Node 20 gives a worker neither the parent's
 * loader hooks nor, through `--import`, tsx's (its registration is skipped off the main thread).
 */
export function startWorker(from: string, name: string, opts: WorkerOptions): Worker {
  const js = new URL(`./${name}.js`, from);
  if (existsSync(fileURLToPath(js))) return new Worker(js, opts);
  const ts = new URL(`./${name}.ts`, from).href;
  const api = import.meta.resolve("tsx/esm/api");
  const bootstrap = `import(${JSON.stringify(api)}).then((tsx) => { tsx.register(); return import(${JSON.stringify(ts)}); }).catch((err) => { throw err; });`;
  return new Worker(bootstrap, { ...opts, eval: true });
}
