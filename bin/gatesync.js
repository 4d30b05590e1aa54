#!/usr/bin/env node
"use strict";
// The launcher, a CommonJS script (bin/package.json): Node's ES module loader is not in its
// startup snapshot. `--help` and `--version` print what the build already knows, so they are
// answered from the build's record of them (dist/bundle/answers.json, written by
// scripts/bundle/build-answers.ts from what the bundle itself printed) without loading gatesync;
// everything else runs the CLI's script with its code cache (dist/bundle/cli.cjs, built by
// `npm install` through `prepare`; script-loader.js).
const { readFileSync } = require("node:fs");
const path = require("node:path");

/** What the build printed for `args`, when it holds here: `[command…] --help|-h`, `--version|-V`. */
function builtAnswer(args) {
  const last = args[args.length - 1];
  const help = last === "--help" || last === "-h";
  const asked = help ? [...args.slice(0, -1), "--help"].join(" ") : args.length === 1 && (last === "--version" || last === "-V") ? "--version" : undefined;
  if (asked === undefined) return undefined;
  let built;
  try {
    built = JSON.parse(readFileSync(path.join(__dirname, "../dist/bundle/answers.json"), "utf8"));
  } catch {
    return undefined; // no build's record, or not one to read: the bundle answers
  }
  if (typeof built?.answers !== "object" || built.answers === null || typeof built.width !== "number") return undefined;
  // help is wrapped to a narrower terminal's width (src/cli.ts), else to the recorded one (a terminal of no width too)
  const columns = process.stdout.isTTY ? process.stdout.columns : 0;
  if (help && columns > 0 && columns < built.width) return undefined;
  const answer = Object.hasOwn(built.answers, asked) ? built.answers[asked] : undefined;
  return typeof answer === "string" ? answer : undefined;
}

const answer = builtAnswer(process.argv.slice(2));
if (answer === undefined) {
  // before any of gatesync is loaded
  require("./v8-flags.js").applyStartupFlags();
  const { exports: cli } = require("./script-loader.js").runScript(path.join(__dirname, "../dist/bundle/cli.cjs"));
  void cli.main(process.argv);
} else {
  // `gatesync --help | head`: the reader's early close drops the rest, as Unix tools do
  process.stdout.on("error", (err) => {
    if (err.code !== "EPIPE") throw err;
  });
  process.stdout.write(answer);
}
