#!/usr/bin/env node
// Thin launcher: the compiled CLI is bundled into dist/bundle/ (built by `npm install` through
// `prepare`: tsc, then scripts/bundle.ts).
import { applyStartupFlags } from "./v8-flags.js";

// before any of gatesync is loaded
applyStartupFlags();

const { main } = await import("../dist/bundle/cli.js");
await main(process.argv);
