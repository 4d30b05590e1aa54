"use strict";
// How gatesync's scripts are loaded — the CLI itself (dist/bundle/cli.cjs) and the precompiled
// validators, `yaml` and `commander` (dist/bundle/compiled/): each a CommonJS body in one function
// expression, compiled with the V8 code cache the build made beside it. Node 20 caches no code
// for ES modules (`module.enableCompileCache()` is Node ≥ 22.1) nor for CommonJS files, so this
// is written by hand: `vm.Script` is the one way to hand V8 a cache. V8 checks a cache against
// the source, its own version and the process's flags, and compiles as before when it does not
// match (another Node, `NODE_OPTIONS` with V8 flags): it only ever costs the time it would save.
const { existsSync, readFileSync } = require("node:fs");
const { createRequire } = require("node:module");
const path = require("node:path");
const { pathToFileURL } = require("node:url");
const { Script } = require("node:vm");

// Node's modules a script requires at its top but uses only on a path few commands take:
// `child_process` (and with it `net`, `dgram` …), which commander requires for subcommands run
// as executables — gatesync has none — and gatesync's git needs only once it fetches
// (docs/dev/performance.md). Only modules whose members are read (`x.spawn`), never copied whole.
const deferred = new Set(["node:child_process", "child_process"]);

/** `require`, but a module of `deferred` is loaded on the first read of one of its members. */
function deferringRequire(require) {
  const onFirstUse = (id) => new Proxy({}, { get: (_, key) => Reflect.get(require(id), key) });
  return Object.assign((id) => (deferred.has(id) ? onFirstUse(id) : require(id)), require);
}

/** Compiles `file` (with its cache when there is one) and runs it: its exports, and the script, to make a cache of. */
exports.runScript = function runScript(file) {
  const cache = `${file}.v8cache`;
  // no `import()` in a script: a function from the cache would have no loader for it (scripts/bundle/bundle.ts)
  const script = new Script(readFileSync(file, "utf8"), { filename: file, ...(existsSync(cache) ? { cachedData: readFileSync(cache) } : {}) });
  const module = { exports: {} };
  script.runInThisContext()(module.exports, deferringRequire(createRequire(file)), module, file, path.dirname(file), pathToFileURL(file).href);
  return { exports: module.exports, script };
};
