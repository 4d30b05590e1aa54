/**
 * `schemas/resource.schema.json`, generated from the kind registry: `kind` is one of the
 * registered kinds, and each kind dispatches to its own schema. `npm run schemas` writes it;
 * a test fails when the file and the registry disagree.
 */
import type { KindModule } from "./kind.js";

export function resourceSchema(kinds: readonly KindModule[]): Record<string, unknown> {
  return {
    $schema: "https://json-schema.org/draft/2020-12/schema",
    $id: "https://gatesync.dev/schemas/resource.schema.json",
    title: "gatesync resource",
    description:
      "Any gatesync resource; dispatches on `kind` to the schema of that kind. Point yaml-language-server at this file. Generated from the kind registry by `npm run schemas`: do not edit.",
    type: "object",
    required: ["apiVersion", "kind", "metadata", "spec"],
    properties: {
      apiVersion: { $ref: "common.schema.json#/$defs/apiVersion" },
      kind: { enum: kinds.map((k) => k.kind), description: "Kind of the resource." },
    },
    allOf: kinds.map((k) => ({ if: { properties: { kind: { const: k.kind } }, required: ["kind"] }, then: { $ref: k.schemaFile } })),
  };
}

/** The file's text: two-space JSON and a final newline. */
export function resourceSchemaText(kinds: readonly KindModule[]): string {
  return `${JSON.stringify(resourceSchema(kinds), null, 2)}\n`;
}
