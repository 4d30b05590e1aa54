/**
 * The production gateway's published schemas, from the copies this repository carries for tests
 * (test/fixtures/shared/reference/published), compiled here on their own — not through gatesync's
 * schemas or its precompiled validators — to check what gatesync sends.
 *
 * - `mergedValidator`: the OpenAPI 3.0/3.1 schema merged with the `x-gw-api-gateway` extension
 *   schema as the gateway merges them (the extension under `properties`, its definitions beside
 *   the OpenAPI schema's own);
 * - `sessionValidator`: the organisation-key session, plus the JSON-RPC/MCP members production
 *   takes (the published README says the schema does not list them yet).
 */
import { readFileSync } from "node:fs";
import { createRequire } from "node:module";
import path from "node:path";
import type { Options, ValidateFunction } from "ajv";
import { Ajv2020 } from "ajv/dist/2020.js";
import AjvDraft04Module from "ajv-draft-04";
import addFormatsModule from "ajv-formats";
import { sharedRoot } from "./temp-repo.js";

type Json = Record<string, unknown>;
type AjvLike = { compile(schema: object): ValidateFunction; addFormat(name: string, format: boolean): unknown };
const AjvDraft04 = AjvDraft04Module as unknown as new (opts: Options) => AjvLike;
const addFormats = addFormatsModule as unknown as (ajv: AjvLike) => void;

export const publishedDir = path.join(sharedRoot, "reference", "published");
const read = (file: string): Json => JSON.parse(readFileSync(file, "utf8")) as Json;
const fromValidator = createRequire(createRequire(import.meta.url).resolve("@seriousme/openapi-schema-validator"));

/** A draft-04 schema in 2020-12 terms: `#/definitions/` references to `#/$defs/`, tuple `items` to `prefixItems`. */
function as2020(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(as2020);
  if (value === null || typeof value !== "object") return value;
  const out: Json = {};
  for (const [k, v] of Object.entries(value)) {
    if (k === "$ref" && typeof v === "string") out.$ref = v.replace("#/definitions/", "#/$defs/");
    else if (k === "items" && Array.isArray(v)) out.prefixItems = as2020(v);
    else out[k] = as2020(v);
  }
  return out;
}

const cache = new Map<string, ValidateFunction>();

/** The OpenAPI schema of the document's version merged with the published extension schema. */
export function mergedValidator(openapi: string): ValidateFunction {
  const version = openapi.startsWith("3.1") ? "3.1" : "3.0";
  const hit = cache.get(version);
  if (hit !== undefined) return hit;
  const oas = read(fromValidator.resolve(`./schemas/v${version}/schema.json`));
  const { definitions, $schema: _dialect, ...extension } = read(path.join(publishedDir, "x-gw-api-gateway.schema.json"));
  let validate: ValidateFunction;
  if (version === "3.0") {
    const merged = {
      ...oas,
      properties: { ...(oas.properties as Json), "x-gw-api-gateway": extension },
      definitions: { ...(oas.definitions as Json), ...(definitions as Json) },
    };
    const ajv = new AjvDraft04({ strict: false, allErrors: true });
    addFormats(ajv);
    validate = ajv.compile(merged);
  } else {
    const merged = {
      ...oas,
      properties: { ...(oas.properties as Json), "x-gw-api-gateway": as2020(extension) },
      $defs: { ...(oas.$defs as Json), ...(as2020(definitions) as Json) },
    };
    const ajv = new Ajv2020({ strict: false, allErrors: true });
    addFormats(ajv as unknown as AjvLike);
    ajv.addFormat("media-range", true);
    validate = ajv.compile(merged);
  }
  cache.set(version, validate);
  return validate;
}

/** The published organisation-key session, with the JSON-RPC/MCP access-rights members; `nullable` as production reads it. */
export function sessionValidator(): ValidateFunction {
  const hit = cache.get("session");
  if (hit !== undefined) return hit;
  const withNulls = (value: unknown): unknown => {
    if (Array.isArray(value)) return value.map(withNulls);
    if (value === null || typeof value !== "object") return value;
    const v: Json = Object.fromEntries(Object.entries(value).map(([k, x]) => [k, withNulls(x)]));
    if (v.nullable === true && typeof v.type === "string") v.type = [v.type, "null"];
    if (v.nullable === true && v.$ref !== undefined) return { anyOf: [{ $ref: v.$ref }, { type: "null" }] };
    delete v.nullable;
    delete v.example;
    return v;
  };
  const schema = withNulls(read(path.join(publishedDir, "gateway-session.schema.json"))) as { $defs: Record<string, { properties: Json }> };
  schema.$defs.AccessDefinition!.properties = {
    ...schema.$defs.AccessDefinition!.properties,
    json_rpc_methods: { type: ["array", "null"] },
    json_rpc_methods_access_rights: { type: ["object", "null"] },
    mcp_primitives: { type: ["array", "null"] },
    mcp_access_rights: { type: ["object", "null"] },
  };
  const ajv = new Ajv2020({ strict: false, allErrors: true });
  addFormats(ajv as unknown as AjvLike);
  const validate = ajv.compile(schema);
  cache.set("session", validate);
  return validate;
}
