/**
 * Operation 1's check of the OpenAPI document against the OpenAPI schema, as the gateway does
 * it: the first problem becomes the 400's message. The sandbox's own validator instance, not
 * gatesync's validation code.
 */
import { Validator } from "@seriousme/openapi-schema-validator";

export class OpenApiDocumentChecker {
  private readonly validator = new Validator();

  /** The validator's first complaint about `document`, or undefined when it is valid. */
  async problem(document: Record<string, unknown>): Promise<string | undefined> {
    const result = await this.validator.validate(document);
    if (result.valid) return undefined;
    if (typeof result.errors === "string") return result.errors.includes("only internal refs are supported") ? undefined : result.errors;
    const first = (result.errors ?? [])[0];
    if (first === undefined) return "invalid OpenAPI document";
    const where = first.instancePath.split("/").slice(1).join(".");
    return `${where === "" ? "" : `${where}: `}${first.message ?? "invalid"}`;
  }
}
