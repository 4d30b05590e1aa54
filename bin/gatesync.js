#!/usr/bin/env node
// Thin launcher: the compiled CLI is bundled into dist/bundle/ (built by `npm install` through
// `prepare`: tsc, then scripts/bundle.ts).
import { setFlagsFromString } from "node:v8";

// V8 optimises a function once it has run for a budget of work; most of a command on a small
// repository is code that runs once, and optimising it cost ~130 ms of a 460 ms `validate` of
// the examples (measured: CPU of the whole process, --no-opt 340 ms). Eight times the default
// budget (67,584) leaves code that runs once alone and still optimises what runs long: the
// examples' validate 460 → 330 ms of CPU, a 10,000-resource validate 13.1 → 12.3 s
// (docs/dev/performance.md). Set before any of gatesync is loaded; `NODE_OPTIONS` may override it.
if (!process.execArgv.some((a) => a.startsWith("--interrupt-budget")) && !(process.env.NODE_OPTIONS ?? "").includes("--interrupt-budget"))
  setFlagsFromString("--interrupt-budget=540672");

const { main } = await import("../dist/bundle/cli.js");
await main(process.argv);
