// @seriousme/openapi-schema-validator's reference checker (resolve.js, which its package ships
// without types): what its Validator#validate returns for a document the schema accepts.
declare module "@seriousme/openapi-schema-validator/resolve.js" {
  export function checkRefs(tree: Record<string, unknown>): { valid: boolean; errors?: string };
}
