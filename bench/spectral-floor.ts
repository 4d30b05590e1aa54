/**
 * Spectral's own cost on a repository: the rules bench's two ruleset files loaded as Spectral's
 * CLI loads a ruleset (`bundleAndLoadRuleset` of @stoplight/spectral-ruleset-bundler), and every
 * file linted with Spectral's documented API the way its CLI does it (`new Document(text,
 * Parsers.Yaml, file)` per YAML document, `spectral.run`), on one thread: the OpenAPI ruleset on
 * each OpenAPI document, the resource ruleset on each resource document. No gatesync code runs,
 * except with `--speed-ups`: then the two per-document costs gatesync pays once per thread
 * instead (src/rules/spectral-speed.ts) are paid once here too. bench/rules.ts runs it as a
 * process beside `gatesync validate`: what Spectral alone needs is a floor no integration of it
 * goes under.
 *
 *   node --import tsx bench/spectral-floor.ts ROOT OPENAPI_RULESET RESOURCES_RULESET [--speed-ups]
 */
import * as fs from "node:fs";
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { speedUpSpectral } from "../src/rules/spectral-speed.js";

const require = createRequire(import.meta.url);
const [root, openapiRuleset, resourcesRuleset, flag] = process.argv.slice(2);
if (root === undefined || openapiRuleset === undefined || resourcesRuleset === undefined) {
  throw new Error("usage: spectral-floor.ts ROOT OPENAPI_RULESET RESOURCES_RULESET [--speed-ups]");
}
if (flag === "--speed-ups") speedUpSpectral();

interface SpectralApi {
  Spectral: new () => { setRuleset(r: unknown): void; run(d: unknown): Promise<unknown[]> };
  Document: new (text: string, parser: unknown, source: string) => unknown;
}
const { Spectral, Document } = require("@stoplight/spectral-core") as SpectralApi;
const Parsers = require("@stoplight/spectral-parsers") as { Yaml: unknown };
const { bundleAndLoadRuleset } = require("@stoplight/spectral-ruleset-bundler/with-loader") as {
  bundleAndLoadRuleset: (file: string, io: { fs: typeof fs; fetch: typeof fetch }) => Promise<unknown>;
};

async function spectralWith(ruleset: string): Promise<InstanceType<SpectralApi["Spectral"]>> {
  const spectral = new Spectral();
  spectral.setRuleset(await bundleAndLoadRuleset(path.resolve(ruleset), { fs, fetch }));
  return spectral;
}
const openapi = await spectralWith(openapiRuleset);
const resources = await spectralWith(resourcesRuleset);

function* files(dir: string): Generator<string> {
  for (const e of readdirSync(dir, { withFileTypes: true }).sort((a, b) => a.name.localeCompare(b.name))) {
    const full = path.join(dir, e.name);
    if (e.isDirectory()) yield* files(full);
    else if (/\.(ya?ml|json)$/.test(e.name)) yield full;
  }
}

let findings = 0;
let documents = 0;
for (const file of files(root)) {
  const text = readFileSync(file, "utf8");
  // a resource file holds several YAML documents: Spectral lints one document at a time
  const isOpenApi = /^(openapi|swagger)\s*:/m.test(text) || /^\s*\{\s*"(openapi|swagger)"/.test(text);
  const parts = isOpenApi ? [text] : text.split(/^---\s*$/m).filter((p) => p.trim() !== "");
  for (const part of parts) {
    findings += (await (isOpenApi ? openapi : resources).run(new Document(part, Parsers.Yaml, file))).length;
    documents++;
  }
}
process.stdout.write(`${JSON.stringify({ documents, findings })}\n`);
