/**
 * Operation 1's checks beyond the OpenAPI schema, as the production gateway runs them: the
 * `x-gw-api-gateway` member against the extension schema the gateway publishes (merged into
 * the OpenAPI schema there; the sandbox keeps its own copy in ./published, never gatesync's
 * schemas/), then the semantic checks of a document — each refusal a 400 with the first
 * problem. Written apart from gatesync's validation (src/validate) on purpose: a mistake there
 * must show up here as a disagreement, not be repeated.
 */
import type { ErrorObject, Options, ValidateFunction } from "ajv";
import AjvDraft04Module from "ajv-draft-04";
import addFormatsModule from "ajv-formats";
import extensionSchema from "../published/x-gw-api-gateway.schema.json" with { type: "json" };

type Json = Record<string, unknown>;
type AjvLike = { compile(schema: object): ValidateFunction };
// CommonJS modules: their default export arrives as the module object
const AjvDraft04 = AjvDraft04Module as unknown as new (opts: Options) => AjvLike;
const addFormats = addFormatsModule as unknown as (ajv: AjvLike) => void;

const isObject = (v: unknown): v is Json => v !== null && typeof v === "object" && !Array.isArray(v);

let compiled: ValidateFunction | undefined;
function extensionValidator(): ValidateFunction {
  if (compiled === undefined) {
    const ajv = new AjvDraft04({ strict: false });
    addFormats(ajv);
    compiled = ajv.compile(extensionSchema);
  }
  return compiled;
}

const where = (e: ErrorObject): string => e.instancePath.split("/").slice(1).join(".");

/** The extension's first problem against the published schema, or undefined. */
export function extensionProblem(document: Json): string | undefined {
  if (!("x-gw-api-gateway" in document)) return undefined;
  const validate = extensionValidator();
  if (validate(document["x-gw-api-gateway"])) return undefined;
  const first = validate.errors?.[0];
  if (first === undefined) return "x-gw-api-gateway: invalid";
  const at = where(first);
  return `x-gw-api-gateway${at === "" ? "" : `.${at}`}: ${first.message ?? first.keyword}`;
}

const verbs = ["get", "put", "post", "delete", "options", "head", "patch", "trace"];

function operationsOf(document: Json): Array<{ path: string; verb: string; item: Json; op: Json }> {
  const paths = isObject(document.paths) ? document.paths : {};
  return Object.entries(paths).flatMap(([path, item]) =>
    isObject(item) ? verbs.filter((v) => isObject(item[v])).map((verb) => ({ path, verb, item, op: item[verb] as Json })) : [],
  );
}

function deref(document: Json, value: unknown): unknown {
  if (!isObject(value) || typeof value.$ref !== "string" || !value.$ref.startsWith("#/")) return value;
  return value.$ref
    .slice(2)
    .split("/")
    .reduce<unknown>((node, seg) => (isObject(node) ? node[seg.replaceAll("~1", "/").replaceAll("~0", "~")] : undefined), document);
}

function pathParams(document: Json, list: unknown): string[] {
  if (!Array.isArray(list)) return [];
  return list.map((p) => deref(document, p)).flatMap((p) => (isObject(p) && p.in === "path" && typeof p.name === "string" ? [p.name] : []));
}

/** The first semantic problem, in the words of the gateway's validator, or undefined. */
export function semanticProblem(document: Json): string | undefined {
  const schemes = isObject(document.components) && isObject(document.components.securitySchemes) ? document.components.securitySchemes : {};
  const undeclared = (reqs: unknown): string | undefined =>
    Array.isArray(reqs) ? reqs.flatMap((r) => (isObject(r) ? Object.keys(r) : [])).find((name) => !(name in schemes)) : undefined;
  const top = undeclared(document.security);
  if (top !== undefined) return `security requirement "${top}" is not defined in components.securitySchemes`;
  const seen = new Map<string, string>();
  for (const { path, verb, item, op } of operationsOf(document)) {
    const name = undeclared(op.security);
    if (name !== undefined) return `security requirement "${name}" of ${verb.toUpperCase()} ${path} is not defined in components.securitySchemes`;
    const inPath = [...path.matchAll(/\{([^}]+)\}/g)].map((m) => m[1]!);
    const declared = new Set([...pathParams(document, item.parameters), ...pathParams(document, op.parameters)]);
    const missing = inPath.filter((p) => !declared.has(p));
    if (missing.length > 0) return `operation ${verb.toUpperCase()} ${path} must define exactly all path parameters (missing: [${missing.join(" ")}])`;
    const extra = [...declared].filter((p) => !inPath.includes(p));
    if (extra.length > 0) return `operation ${verb.toUpperCase()} ${path} must define exactly all path parameters (extra: [${extra.join(" ")}])`;
    if (typeof op.operationId === "string") {
      const earlier = seen.get(op.operationId);
      if (earlier !== undefined)
        return `operations ${JSON.stringify(earlier)} and ${JSON.stringify(`${verb.toUpperCase()} ${path}`)} have the same operation id ${JSON.stringify(op.operationId)}`;
      seen.set(op.operationId, `${verb.toUpperCase()} ${path}`);
    }
  }
  const components = isObject(document.components) ? document.components : {};
  for (const [group, members] of Object.entries(components)) {
    if (group.startsWith("x-") || !isObject(members)) continue;
    const bad = Object.keys(members).find((n) => !/^[a-zA-Z0-9._-]+$/.test(n));
    if (bad !== undefined) return `invalid components: identifier ${JSON.stringify(bad)} is not supported by OpenAPIv3 standard (charset: [a-zA-Z0-9.\\-_])`;
  }
  return undefined;
}
