/**
 * How the bundle loads the precompiled validators (src/validate/compiled/: 2 MB of ajv's
 * standalone code, most of what `validate` compiles): as scripts with the code cache the build
 * made for them (scripts/bundle/bundle.ts), instead of ES modules, which Node 20 compiles
 * afresh in every process (its module compile cache is Node ≥ 22.1); and each on the first
 * call of one of its validators — a repository whose documents are all OpenAPI 3.0, or carry
 * no `x-gw-api-gateway` member, never loads the 3.1 or the extension's. Only the bundle uses
 * this: from the sources (tests, tsx) and from tsc's dist/ the modules are imported as they are.
 *
 * The scripts are loaded as the launcher loads the CLI's own (bin/script-loader.js).
 */
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { StandaloneValidator } from "../../src/validate/schema/standalone-validator.js";
import { runScript } from "../../bin/script-loader.js";

/** Where the build writes the scripts and their caches: beside the bundle's chunks. */
const scriptDir = path.join(path.dirname(fileURLToPath(import.meta.url)), "compiled");

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
