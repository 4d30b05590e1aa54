/**
 * The JSON Schemas gatesync validates against, compiled by ajv as they are at run time, and
 * ajv's standalone code for them (`npm run schemas` writes it to src/validate/compiled/), so that
 * no process compiles a schema. Two sets:
 *
 * - gatesync's own schemas (schemas/*.schema.json): by file name, and the `file#/pointer`
 *   fragments the kinds validate attached documents against;
 * - the official OpenAPI 3.0 and 3.1 schemas shipped by @seriousme/openapi-schema-validator,
 *   compiled exactly as its `Validator` compiles them (same ajv class per dialect, same options,
 *   same formats), so the standalone functions give its verdicts and its errors;
 * - the production gateway's published schema of the `x-gw-api-gateway` extension
 *   (schemas/published/, a copy of what the gateway publishes: `scripts/check-published.ts`
 *   compares it), which the gateway merges into the OpenAPI schema: compiled on its own, in its
 *   dialect (draft-04), with every error (allErrors), for the extension member of a document.
 *
 * Tests compare the committed code with `standaloneModules()` and the verdicts of both.
 */
import { readFileSync, readdirSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import { fileURLToPath } from "node:url";
import type { Options, ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import type * as core from "ajv/dist/core.js";
import standaloneModule from "ajv/dist/standalone/index.js";
import addFormatsModule from "ajv-formats";
import { allKinds } from "../src/kinds/registry.js";
import { openApiAjvOptions } from "../src/validate/document/openapi-validator.js";

type AjvCore = core.default;
// CommonJS modules: their default export arrives as the module object
const addFormats = addFormatsModule as unknown as (ajv: AjvCore) => void;
const standaloneCode = standaloneModule as unknown as (ajv: AjvCore, refsOrFunc?: Record<string, string> | ValidateFunction) => string;

export const projectRoot = path.resolve(path.dirname(fileURLToPath(import.meta.url)), "..");
export const schemaDir = path.join(projectRoot, "schemas");
/** Where the generated modules live (TypeScript, so that `tsc` and vitest take them as they are). */
export const compiledDir = path.join(projectRoot, "src/validate/compiled");
const schemaBase = "https://gatesync.dev/schemas/";

type Code = NonNullable<Options["code"]>;
const standalone: Code = { source: true, esm: true, lines: true };

/** gatesync's schemas: every file, and every fragment a kind validates an attached document against. */
export function schemaNames(dir: string = schemaDir): string[] {
  const files = readdirSync(dir)
    .filter((f) => f.endsWith(".schema.json"))
    .sort();
  const fragments = allKinds().flatMap((k) => (k.attached !== undefined && k.attached.schema.includes("#") ? [k.attached.schema] : []));
  return [...files, ...[...new Set(fragments)].sort()];
}

/** The ajv instance holding gatesync's schemas, with the options the error messages are made from. */
export function gatesyncAjv(dir: string = schemaDir, code?: Code): Ajv2020 {
  const ajv = new Ajv2020({
    allErrors: true,
    verbose: true,
    strict: true,
    strictRequired: false,
    allowUnionTypes: true,
    ...(code === undefined ? {} : { code }),
  });
  addFormats(ajv);
  ajv.addKeyword({ keyword: "x-error", schemaType: "string" });
  // who decides a setting of gatesync.yaml: the team (read from the commit) or the operator (the daemon's own file)
  ajv.addKeyword({ keyword: "x-owner", schemaType: "string" });
  for (const file of readdirSync(dir)
    .filter((f) => f.endsWith(".schema.json"))
    .sort()) {
    ajv.addSchema(JSON.parse(readFileSync(path.join(dir, file), "utf8")) as object);
  }
  return ajv;
}

/** Validators compiled at run time, by schema name (as the product did before; for tests). */
export function runtimeSchemaValidators(dir: string = schemaDir): (name: string) => ValidateFunction | undefined {
  const ajv = gatesyncAjv(dir);
  return (name) => ajv.getSchema(schemaBase + name);
}

export type OpenApiVersion = "3.0" | "3.1";
export const openApiVersions: readonly OpenApiVersion[] = ["3.0", "3.1"];

// resolved from the validator's package: the ajv classes it uses itself
const fromValidator = createRequire(createRequire(import.meta.url).resolve("@seriousme/openapi-schema-validator"));

/** The OpenAPI schema of `version` compiled as @seriousme's Validator#getAjvValidator does it. */
export function openApiValidator(version: OpenApiVersion, code?: Code): { ajv: AjvCore; validate: ValidateFunction } {
  const schema = JSON.parse(readFileSync(fromValidator.resolve(`./schemas/v${version}/schema.json`), "utf8")) as { $schema: string };
  const classes: Record<string, string> = {
    "http://json-schema.org/draft-04/schema#": "ajv-draft-04",
    "https://json-schema.org/draft/2020-12/schema": "ajv/dist/2020.js",
  };
  const module = classes[schema.$schema];
  if (module === undefined) throw new Error(`OpenAPI ${version}: unexpected dialect ${schema.$schema}`);
  const loaded = fromValidator(module) as { default: new (opts: Options) => AjvCore };
  // the options gatesync gives the library's Validator (strict off, every error)
  const ajv = new loaded.default({ ...openApiAjvOptions, ...(code === undefined ? {} : { code }) });
  addFormats(ajv);
  ajv.addFormat("media-range", true);
  return { ajv, validate: ajv.compile(schema) };
}

/** The published extension schema as gatesync carries it. */
export const extensionSchemaFile = path.join(schemaDir, "published", "x-gw-api-gateway.schema.json");

/** The gateway extension's schema, compiled with every error reported (the document's whole verdict at once). */
export function extensionValidator(code?: Code): { ajv: AjvCore; validate: ValidateFunction } {
  const schema = JSON.parse(readFileSync(extensionSchemaFile, "utf8")) as { $schema: string };
  if (schema.$schema !== "http://json-schema.org/draft-04/schema#") throw new Error(`x-gw-api-gateway: unexpected dialect ${schema.$schema}`);
  const loaded = fromValidator("ajv-draft-04") as { default: new (opts: Options) => AjvCore };
  // strict off as for the OpenAPI schemas (the published schema uses draft-04 tuple `items`)
  const ajv = new loaded.default({ strict: false, allErrors: true, ...(code === undefined ? {} : { code }) });
  addFormats(ajv);
  return { ajv, validate: ajv.compile(schema) };
}

const header = (from: string): string =>
  [
    `// Generated by \`npm run schemas\` (scripts/standalone-validators.ts) from ${from}: do not edit.`,
    "// ajv's standalone validation code: the schemas compiled at build time, not in every process.",
    "// @ts-nocheck",
    'import { createRequire } from "node:module";',
    'import type { StandaloneValidator } from "../schema/standalone-validator.js";',
    "const require = createRequire(import.meta.url);",
    "",
  ].join("\n");

/** ajv's ESM output refers to its runtime helpers with `require`: the header defines one. */
function body(code: string): string {
  return code.replace(/^"use strict";\n?/, "");
}

function gatesyncModule(): string {
  const ajv = gatesyncAjv(schemaDir, standalone);
  const names = schemaNames();
  const refs = Object.fromEntries(names.map((n, i) => [`v${i}`, schemaBase + n]));
  const table = names.map((n, i) => `  ${JSON.stringify(n)}: v${i},`).join("\n");
  return `${header("schemas/*.schema.json")}${body(standaloneCode(ajv, refs))}\n\n/** By schema name, as \`SchemaRegistry#validate\` names them. */\nexport const validators: Readonly<Record<string, StandaloneValidator>> = {\n${table}\n};\n`;
}

function openApiModule(version: OpenApiVersion): string {
  const { ajv, validate } = openApiValidator(version, standalone);
  const code = body(standaloneCode(ajv, validate));
  const named = code.replace(/^export const validate = (\w+);\nexport default \w+;\n/, `export const validate: StandaloneValidator = $1;\n`);
  if (named === code) throw new Error("ajv's standalone output changed shape: update openApiModule()");
  return `${header(`@seriousme/openapi-schema-validator's schemas/v${version}/schema.json`)}${named}`;
}

function extensionModule(): string {
  const { ajv, validate } = extensionValidator(standalone);
  const code = body(standaloneCode(ajv, validate));
  const named = code.replace(/^export const validate = (\w+);\nexport default \w+;\n/, `export const validate: StandaloneValidator = $1;\n`);
  if (named === code) throw new Error("ajv's standalone output changed shape: update extensionModule()");
  return `${header("schemas/published/x-gw-api-gateway.schema.json")}${named}`;
}

/** The generated modules: file name in `compiledDir` → text. */
export function standaloneModules(): Record<string, string> {
  return {
    "gatesync-schemas.ts": gatesyncModule(),
    "x-gw-api-gateway.ts": extensionModule(),
    ...Object.fromEntries(openApiVersions.map((v) => [`openapi-${v.replace(".", "-")}.ts`, openApiModule(v)])),
  };
}
