/**
 * One OpenAPI document per API, as real repositories have: each starts from a document of the
 * corpus (the OpenAPI Initiative's examples) and is mutated — its own title and version, its
 * paths moved under the API's prefix and repeated a varying number of times with their own
 * operation ids, its own component schemas with varying fields — so that no two are alike and
 * sizes spread from about the corpus's smallest to several times its largest.
 */
import { readFileSync, readdirSync } from "node:fs";
import path from "node:path";
import { parse, stringify } from "yaml";
import { uniformFloat64 } from "pure-rand/distribution/uniformFloat64";
import { xoroshiro128plus } from "pure-rand/generator/xoroshiro128plus";
import { semanticIssues } from "../src/validate/document/openapi-semantics.js";

type Json = Record<string, unknown>;

/**
 * The corpus documents an API may start from (3.0 and 3.1 `pass` sets, the larger ones), less
 * those the gateway's own checks refuse (the 3.1 set's operation-object-example.yaml names an
 * undeclared security scheme): `gatesync validate` would fail the whole generated repository.
 */
export function loadCorpus(oasDir: string): Json[] {
  const docs: Json[] = [];
  for (const dir of ["3.0/pass", "3.1/pass"]) {
    for (const f of readdirSync(path.join(oasDir, dir)).sort()) {
      const text = readFileSync(path.join(oasDir, dir, f), "utf8");
      if (text.length < 1000) continue; // the 3.1 suite's one-liners are not APIs
      const doc = parse(text) as Json;
      if (doc.paths !== undefined && Object.keys(doc.paths as Json).length > 0 && semanticIssues(doc).length === 0) docs.push(doc);
    }
  }
  return docs;
}

const fieldTypes = [
  { type: "string" },
  { type: "integer", format: "int64" },
  { type: "boolean" },
  { type: "string", format: "date-time" },
  { type: "number" },
  { type: "array", items: { type: "string" } },
];
const words = [
  "account",
  "order",
  "invoice",
  "shipment",
  "customer",
  "ledger",
  "token",
  "device",
  "report",
  "tenant",
  "quota",
  "region",
  "channel",
  "policy",
  "session",
];

/** Document `k`: corpus document k mod n, mutated with a generator seeded by k. */
export function openApiVariant(corpus: readonly Json[], k: number): string {
  const rng = xoroshiro128plus(k + 1);
  const rand = (): number => uniformFloat64(rng);
  const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
  const doc = structuredClone(corpus[k % corpus.length]!);
  doc.info = {
    ...(doc.info as Json),
    title: `${pick(words)} service ${k}`,
    version: `${1 + (k % 4)}.${k % 10}.${Math.floor(rand() * 20)}`,
    description: `Service ${k}: ${words.slice(0, 3 + (k % 8)).join(", ")}.`,
  };
  const copies = 1 + Math.floor(rand() * 4);
  const prefix = `/v${1 + (k % 3)}/${pick(words)}-${k}`;
  const paths: Json = {};
  for (let c = 0; c < copies; c++) {
    for (const [p, item] of Object.entries(doc.paths as Json)) {
      const copy = structuredClone(item) as Json;
      for (const op of Object.values(copy)) {
        if (op !== null && typeof op === "object" && typeof (op as Json).operationId === "string")
          (op as Json).operationId = `${String((op as Json).operationId)}${k}c${c}`;
      }
      paths[`${prefix}${c === 0 ? "" : `/r${c}`}${p}`] = copy;
    }
  }
  doc.paths = paths;
  const components = (doc.components ?? {}) as Json;
  const schemas = { ...(components.schemas as Json | undefined) };
  const models = 1 + Math.floor(rand() * 6);
  for (let m = 0; m < models; m++) {
    const properties: Json = {};
    const fields = 3 + Math.floor(rand() * 12);
    for (let f = 0; f < fields; f++) properties[`${pick(words)}${f}`] = { ...pick(fieldTypes), description: `field ${f} of model ${m}` };
    schemas[`${pick(words)[0]!.toUpperCase()}Model${k}x${m}`] = { type: "object", required: Object.keys(properties).slice(0, 2), properties };
  }
  doc.components = { ...components, schemas };
  return stringify(doc, { aliasDuplicateObjects: false, lineWidth: 0 });
}
