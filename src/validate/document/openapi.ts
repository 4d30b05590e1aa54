/**
 * Offline validation of OpenAPI 3.0/3.1 documents against the official schemas, shipped by
 * @seriousme/openapi-schema-validator (compiled at build time: see openapi-validator.ts).
 */
import type { ErrorObject } from "ajv";
import { closest } from "fastest-levenshtein";
import type { SchemaIssue } from "../schema/schema-registry.js";
import { similar } from "../../text/similar.js";
import { describeErrors, pointerToPath } from "../schema/schema-registry.js";
import { PrecompiledOpenApiValidator } from "./openapi-validator.js";
import type { OpenApiValidator } from "./openapi-validator.js";
import { validate as validateExtension } from "../compiled/x-gw-api-gateway.js";
import { semanticIssues } from "./openapi-semantics.js";

export interface OpenApiResult {
  readonly errors: SchemaIssue[];
  readonly warnings: SchemaIssue[];
  /**
   * What the gateway refuses besides the OpenAPI schema: the `x-gw-api-gateway` member against
   * the published extension schema (which the gateway merges into the OpenAPI one), and, for a
   * document the OpenAPI schema accepts, its semantic checks. Every problem, not the first.
   */
  readonly gateway: SchemaIssue[];
}

const extensionKey = "x-gw-api-gateway";

/** The extension member against the published schema: every problem, at its member. */
export function extensionIssues(document: Record<string, unknown>): SchemaIssue[] {
  if (!(extensionKey in document) || validateExtension(document[extensionKey])) return [];
  return refine(validateExtension.errors ?? [], document[extensionKey]).map((issue) => ({
    ...issue,
    path: [extensionKey, ...issue.path],
    message: `${issue.message} (the gateway's published ${extensionKey} schema)`,
  }));
}

export class OpenApiChecker {
  /** `validator`: the precompiled one; tests compare it with the library's own. */
  constructor(private readonly validator: OpenApiValidator = new PrecompiledOpenApiValidator()) {}

  async check(document: unknown): Promise<OpenApiResult> {
    if (document === null || typeof document !== "object" || Array.isArray(document)) {
      return { errors: [{ path: [], key: false, message: "the OpenAPI document must be a mapping" }], warnings: [], gateway: [] };
    }
    const doc = document as Record<string, unknown>;
    const result = await this.validator.validate(doc);
    const extension = extensionIssues(doc);
    if (result.valid) return { errors: [], warnings: [], gateway: [...extension, ...semanticIssues(doc)] };
    if (typeof result.errors === "string") {
      // Reference resolution, not the schema: external refs cannot be checked offline.
      if (result.errors.includes("only internal refs are supported")) {
        return {
          errors: [],
          warnings: [
            {
              path: [],
              key: false,
              message: `not checked: ${result.errors.replace(", only internal refs are supported.", "")}`,
              hint: "only references inside the document can be checked offline",
            },
          ],
          gateway: [...extension, ...semanticIssues(doc)],
        };
      }
      return { errors: [{ path: [], key: false, message: result.errors }], warnings: [], gateway: extension };
    }
    return { errors: refine(result.errors ?? [], document), warnings: [], gateway: extension };
  }
}

/** The value at a JSON pointer of the document. */
function valueAt(document: unknown, pointer: string): unknown {
  let v = document;
  for (const seg of pointerToPath(pointer)) v = v !== null && typeof v === "object" ? (v as Record<string | number, unknown>)[seg] : undefined;
  return v;
}

/**
 * One finding per problem, naming the member at fault. The validator stops an object at its
 * first missing field and reports each branch of a failed `oneOf` (a Response or a Reference):
 * so a misspelt `descriptoin` came out as three errors — none naming it. Here a failed
 * alternative is dropped when a more precise error stands at the same place, the Reference
 * branch when the object has no `$ref`, and a missing field next to a misspelling of it is
 * reported at the misspelt member.
 */
function refine(errors: readonly ErrorObject[], document: unknown): SchemaIssue[] {
  const at = new Map<string, ErrorObject[]>();
  for (const e of errors) at.set(e.instancePath, [...(at.get(e.instancePath) ?? []), e]);
  const kept = errors.filter((e) => {
    const here = at.get(e.instancePath)!;
    const value = valueAt(document, e.instancePath);
    const isObject = value !== null && typeof value === "object" && !Array.isArray(value);
    if (e.keyword === "required" && (e.params as { missingProperty?: string }).missingProperty === "$ref" && isObject && !("$ref" in value) && here.length > 1)
      return false;
    if (
      (e.keyword === "oneOf" || e.keyword === "anyOf" || e.keyword === "if") &&
      here.some((x) => x.keyword !== "oneOf" && x.keyword !== "anyOf" && x.keyword !== "if")
    )
      return false;
    return true;
  });
  // the validators are not verbose: an error carries no value, and a `null` would read as "not undefined"
  const withValues = kept.map((e) => (e.data === undefined ? { ...e, data: valueAt(document, e.instancePath) } : e));
  const issues = describeErrors(withValues).map((issue) => {
    const field = /^missing required field `(.+)`$/.exec(issue.message)?.[1];
    const value = valueAt(document, `/${issue.path.map((p) => String(p).replaceAll("~", "~0").replaceAll("/", "~1")).join("/")}`);
    if (field === undefined || value === null || typeof value !== "object" || Array.isArray(value)) return issue;
    const members = Object.keys(value).filter((k) => k !== field && !k.startsWith("x-"));
    const near = members.length === 0 ? undefined : closest(field, members);
    if (near === undefined || !similar(near, field)) return issue;
    return {
      path: [...issue.path, near],
      key: true,
      message: `unknown field \`${near}\`: the required \`${field}\` is missing`,
      hint: `did you mean \`${field}\`?`,
    };
  });
  // with every error collected, the misspelt member also came as an unknown field: said once
  const misspelt = new Set(issues.filter((i) => i.message.includes("` is missing")).map((i) => i.path.join("\0")));
  return issues.filter((i) => !(misspelt.has(i.path.join("\0")) && /^unknown field `[^`]*`$/.test(i.message)));
}
