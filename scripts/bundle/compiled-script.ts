/**
 * How the bundle loads the precompiled validators (src/validate/compiled/: 2 MB of ajv's
 * standalone code, most of what `validate` compiles): as scripts with the code cache the build
 * made for them (scripts/bundle/bundle.ts), instead of ES modules, which Node 20 compiles
 * afresh in every process (its module compile cache is Node ≥ 22.1); and each on the first
 * call of one of its validators — a repository whose documents are all OpenAPI 3.0, or carry
 * no `x-gw-api-gateway` member, never loads the 3.1 or the extension's. Only the bundle uses
 * this: from the sources (tests, tsx) and from tsc's dist/ the modules are imported as they are.
 *
 * V8 checks a cache against the source, its own version and the process's flags, and compiles
 * as before when it does not match (another Node, `NODE_OPTIONS` with V8 flags): it only ever
 * costs the time it would have saved.
 */
import { existsSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath, pathToFileURL } from "node:url";
import { Script } from "node:vm";
import type { StandaloneValidator } from "../../src/validate/schema/standalone-validator.js";

/** Where the build writes the scripts and their caches: beside the bundle's chunks. */
const scriptDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "compiled");

/** A compiled script: one function expression taking CommonJS's parameters and `import.meta.url`. */
type ScriptBody = (exports: object, require: NodeJS.Require, module: { exports: object }, filename: string, dirname: string, url: string) => void;

/** Compiles `file` (with its cache when there is one) and runs it: its exports, and the script, to make a cache of. */
export function runScript(file: string): { exports: Record<string, unknown>; script: Script } {
  const cache = `${file}.v8cache`;
  const script = new Script(readFileSync(file, "utf8"), { filename: file, ...(existsSync(cache) ? { cachedData: readFileSync(cache) } : {}) });
  const module: { exports: Record<string, unknown> } = { exports: {} };
  (script.runInThisContext() as ScriptBody)(module.exports, deferringRequire(createRequire(file)), module, file, path.dirname(file), pathToFileURL(file).href);
  return { exports: module.exports, script };
}

/**
 * Node's modules a script requires at its top but uses only on a path few commands take:
 * `commander` requires `child_process` (and with it `net`, `dgram` …) for subcommands run as
 * executables, which gatesync has none of — ~4 ms of every command's start (docs/dev/performance.md).
 */
const deferred = new Set(["node:child_process", "child_process"]);

/** `require`, but a module of `deferred` is loaded on the first read of one of its members. */
function deferringRequire(require: NodeJS.Require): NodeJS.Require {
  const onFirstUse = (id: string): object => new Proxy({}, { get: (_, key): unknown => Reflect.get(require(id) as object, key) });
  return Object.assign((id: string): unknown => (deferred.has(id) ? onFirstUse(id) : require(id)), require);
}

/** Each script's exports, once run: a package asked for by two modules (`yaml`) is one instance. */
const ran = new Map<string, Record<string, unknown>>();

/** The exports of the script `name` (a compiled validators' module, e.g. `openapi-3-0`, or a package), run on the first ask. */
export function compiledExports(name: string): Record<string, unknown> {
  let exports = ran.get(name);
  if (exports === undefined) {
    exports = runScript(path.join(scriptDir, `${name}.cjs`)).exports;
    ran.set(name, exports);
  }
  return exports;
}

/** Stands for a validator of a script not run yet: runs it on the first call, then calls through (its `errors` copied). */
function onFirstCall(get: () => StandaloneValidator): StandaloneValidator {
  const validate: StandaloneValidator = (data) => {
    const loaded = get();
    const valid = loaded(data);
    validate.errors = loaded.errors ?? null;
    return valid;
  };
  return validate;
}

/** The exports of the compiled validators' module `name` as they are asked for, its script run on the first call of any. */
export function lazyExports(name: string): {
  validator(key: string): StandaloneValidator;
  table(key: string, names: readonly string[]): Record<string, StandaloneValidator>;
} {
  let loaded: Record<string, unknown> | undefined;
  const exports = (): Record<string, unknown> => (loaded ??= compiledExports(name));
  return {
    validator: (key) => onFirstCall(() => exports()[key] as StandaloneValidator),
    table: (key, names) => Object.fromEntries(names.map((n) => [n, onFirstCall(() => (exports()[key] as Record<string, StandaloneValidator>)[n]!)])),
  };
}
