"use strict";
// V8 flags gatesync's launcher sets before loading anything, shared with the build
// (scripts/bundle/make-code-cache.ts), which makes the compiled validators' code caches in a
// process started alike: V8 accepts a code cache only from a process with the same flags.
const { setFlagsFromString } = require("node:v8");

// V8 optimises a function once it has run for a budget of work; most of a command on a small
// repository is code that runs once, and optimising it cost ~130 ms of a 460 ms `validate` of
// the examples (measured: CPU of the whole process, --no-opt 340 ms). Eight times the default
// budget (67,584) leaves code that runs once alone and still optimises what runs long: the
// examples' validate 460 → 330 ms of CPU, a 10,000-resource validate 13.1 → 12.3 s
// (docs/dev/performance.md). `NODE_OPTIONS` or node's command line may override it.
exports.applyStartupFlags = function applyStartupFlags() {
  if (!process.execArgv.some((a) => a.startsWith("--interrupt-budget")) && !(process.env.NODE_OPTIONS ?? "").includes("--interrupt-budget"))
    setFlagsFromString("--interrupt-budget=540672");
};
