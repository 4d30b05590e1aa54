/**
 * Operation 1's check of the OpenAPI document against the OpenAPI schema, as the gateway does
 * it: the first problem becomes the 400's message (the extension and semantic checks:
 * gateway-document-checks.ts). The sandbox's own validator instance, not
 * gatesync's validation code.
 */
import { Validator } from "@seriousme/openapi-schema-validator";
import { extensionProblem, semanticProblem } from "./gateway-document-checks.js";

export class OpenApiDocumentChecker {
  private readonly validator = new Validator();

  /**
   * The first complaint about `document`, or undefined when it is valid: the OpenAPI schema
   * merged with the published extension schema, then the gateway's semantic checks.
   */
  async problem(document: Record<string, unknown>): Promise<string | undefined> {
    const schema = await this.schemaProblem(document);
    return schema ?? extensionProblem(document) ?? semanticProblem(document);
  }

  private async schemaProblem(document: Record<string, unknown>): Promise<string | undefined> {
    const result = await this.validator.validate(document);
    if (result.valid) return undefined;
    if (typeof result.errors === "string") return result.errors.includes("only internal refs are supported") ? undefined : result.errors;
    const first = (result.errors ?? [])[0];
    if (first === undefined) return "invalid OpenAPI document";
    const where = first.instancePath.split("/").slice(1).join(".");
    return `${where === "" ? "" : `${where}: `}${first.message ?? "invalid"}`;
  }
}
