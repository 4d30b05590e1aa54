/**
 * Spectral's own cost on a repository: every file linted with Spectral's documented API the way
 * its CLI does it (`new Document(text, Parsers.Yaml, file)` per YAML document, `spectral.run`),
 * on one thread, with the rules bench's rulesets: `spectral:oas` recommended on each OpenAPI
 * document, the five resource rules on each resource document. No gatesync code runs, except
 * with `--speed-ups`: then the two per-document costs gatesync pays once per thread instead
 * (src/rules/spectral-speed.ts) are paid once here too. bench/rules.ts runs it as a process
 * beside `gatesync validate`: what Spectral alone needs is a floor no integration of it goes under.
 *
 *   node --import tsx bench/spectral-floor.ts ROOT [--speed-ups]
 */
import { readdirSync, readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { speedUpSpectral } from "../src/rules/spectral-speed.js";

const require = createRequire(import.meta.url);
const [root, flag] = process.argv.slice(2);
if (root === undefined) throw new Error("usage: spectral-floor.ts ROOT [--speed-ups]");
if (flag === "--speed-ups") speedUpSpectral();

interface SpectralApi {
  Spectral: new () => { setRuleset(r: unknown): void; run(d: unknown): Promise<unknown[]> };
  Document: new (text: string, parser: unknown, source: string) => unknown;
}
const { Spectral, Document } = require("@stoplight/spectral-core") as SpectralApi;
const Parsers = require("@stoplight/spectral-parsers") as { Yaml: unknown };
const { oas } = require("@stoplight/spectral-rulesets") as { oas: unknown };
const { pattern, casing, truthy, schema } = require("@stoplight/spectral-functions") as Record<string, unknown>;

const openapi = new Spectral();
openapi.setRuleset({ extends: [[oas, "recommended"]] });
// the rules bench's five resource rules (bench/rules.ts, resourcesRuleset), as a JavaScript ruleset
const resources = new Spectral();
resources.setRuleset({
  rules: {
    "listen-path-prefix": { given: "$.spec.query.listenPath", severity: "warn", then: { function: pattern, functionOptions: { match: "^/api-" } } },
    "name-kebab-case": { given: "$.metadata.name", severity: "warn", then: { function: casing, functionOptions: { type: "kebab" } } },
    "team-label": { given: "$.metadata", severity: "warn", then: { field: "labels.team", function: truthy } },
    "org-key-rate": { given: "$.spec.rate", severity: "warn", then: { function: schema, functionOptions: { schema: { type: "number", maximum: 5000 } } } },
    "webhook-inside-company": {
      given: "$.spec.target_path",
      severity: "warn",
      then: { function: pattern, functionOptions: { match: "^https://[a-z0-9.-]*example\\.com/" } },
    },
  },
});

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
