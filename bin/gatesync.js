#!/usr/bin/env node
// Thin launcher: the compiled CLI lives in dist/ (built by `npm install` through `prepare`).
import { main } from "../dist/cli.js";

await main(process.argv);
