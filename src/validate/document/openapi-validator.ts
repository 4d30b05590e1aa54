/**
 * @seriousme/openapi-schema-validator's `Validator#validate` for a parsed document, with the
 * official OpenAPI 3.0 and 3.1 schemas compiled at build time (src/validate/compiled/, by
 * `npm run schemas`, exactly as the library compiles them: same ajv class, options and formats)
 * instead of in every process. The same steps as the library: the version from `swagger` or
 * `openapi`, the schema of that version, then, for a document the schema accepts, its reference
 * check (the library's own `checkRefs`). Other versions (2.0, 3.2, none) go to the library itself,
 * loaded on first need. Tests give both the OpenAPI corpus and compare every result.
 */
import type { ErrorObject } from "ajv";
import type { Validator } from "@seriousme/openapi-schema-validator";
import { checkRefs } from "@seriousme/openapi-schema-validator/resolve.js";
import { validate as validate30 } from "../compiled/openapi-3-0.js";
import { validate as validate31 } from "../compiled/openapi-3-1.js";
import type { StandaloneValidator } from "../schema/standalone-validator.js";

export interface OpenApiValidation {
  readonly valid: boolean;
  /** The schema's errors, or a message (no version, an unresolvable reference). */
  readonly errors?: ErrorObject[] | string;
}

/** What checks a document: this module's validator, or the library's (tests compare them). */
export interface OpenApiValidator {
  validate(document: Record<string, unknown>): Promise<OpenApiValidation>;
}

/** The library's version detection: the first of these whose field starts with it. */
const versions = ["2.0", "3.0", "3.1", "3.2"] as const;

function openApiVersion(document: Record<string, unknown>): (typeof versions)[number] | undefined {
  return versions.find((v) => {
    const field = document[v === "2.0" ? "swagger" : "openapi"];
    return typeof field === "string" && field.startsWith(v);
  });
}

/**
 * The ajv options of both validators: the library's (strict off: the official schemas are not
 * strict-clean) and every error, not the first — a document with two mistakes reports both.
 */
export const openApiAjvOptions = { strict: false, allErrors: true } as const;

const compiled: Partial<Record<(typeof versions)[number], StandaloneValidator>> = { "3.0": validate30, "3.1": validate31 };

export class PrecompiledOpenApiValidator implements OpenApiValidator {
  private library: Promise<Validator> | undefined;

  async validate(document: Record<string, unknown>): Promise<OpenApiValidation> {
    const version = openApiVersion(document);
    const validate = version === undefined ? undefined : compiled[version];
    if (validate === undefined) return (await (this.library ??= loadLibrary())).validate(document);
    if (validate(document)) return checkRefs(document);
    return { valid: false, ...(validate.errors ? { errors: validate.errors } : {}) };
  }
}

async function loadLibrary(): Promise<Validator> {
  const { Validator: LibraryValidator } = await import("@seriousme/openapi-schema-validator");
  return new LibraryValidator({ ...openApiAjvOptions });
}
