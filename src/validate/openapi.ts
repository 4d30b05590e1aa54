/**
 * Offline validation of OpenAPI 3.0/3.1 documents against the official schemas, shipped by
 * @seriousme/openapi-schema-validator (compiled once per version and reused).
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import type { SchemaIssue } from "./schema-registry.js";
import { describeErrors } from "./schema-registry.js";

export interface OpenApiResult {
  readonly errors: SchemaIssue[];
  readonly warnings: SchemaIssue[];
}

export class OpenApiChecker {
  private readonly validator = new Validator();

  async check(document: unknown): Promise<OpenApiResult> {
    if (document === null || typeof document !== "object" || Array.isArray(document)) {
      return { errors: [{ path: [], key: false, message: "the OpenAPI document must be a mapping" }], warnings: [] };
    }
    const result = await this.validator.validate(document as Record<string, unknown>);
    if (result.valid) return { errors: [], warnings: [] };
    if (typeof result.errors === "string") {
      // Reference resolution, not the schema: external refs cannot be checked offline.
      if (result.errors.includes("only internal refs are supported")) {
        return {
          errors: [],
          warnings: [{ path: [], key: false, message: `not checked: ${result.errors.replace(", only internal refs are supported.", "")}`, hint: "only references inside the document can be checked offline" }],
        };
      }
      return { errors: [{ path: [], key: false, message: result.errors }], warnings: [] };
    }
    return { errors: describeErrors((result.errors ?? [])), warnings: [] };
  }
}
