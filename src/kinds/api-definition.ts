import { apiDefinitionChecks } from "./api-definition-checks.js";
import type { AttachedDocument, KindModule, KindRequest, RuleFinding, Spec } from "./kind.js";
import { str } from "./kind.js";

/** The OpenAPI document, inline in `spec.definition` or in the file `spec.definitionFile` names. */
const openApiDocument: AttachedDocument = {
  file: (spec) => (typeof spec.definitionFile === "string" && spec.definitionFile !== "" ? spec.definitionFile : undefined),
  fileField: ["spec", "definitionFile"],
  inlineField: ["spec", "definition"],
  schema: "api-definition.schema.json#/$defs/oas",
  format: "openapi",
  looksLike: (value) => "openapi" in value || "swagger" in value,
  unnamed: {
    message: "OpenAPI document that no ApiDefinition names in definitionFile: ignored",
    hint: "refer to it from an ApiDefinition's spec.definitionFile, or move it out of the resource directory",
  },
  check(document, spec): RuleFinding[] {
    const ext = (document as Record<string, unknown> | null)?.["x-gw-api-gateway"] as Record<string, unknown> | undefined;
    const extId = (ext?.info as Record<string, unknown> | undefined)?.id;
    if (typeof extId !== "string" || extId === spec.apiId) return [];
    return [
      {
        path: ["x-gw-api-gateway", "info", "id"],
        message: `x-gw-api-gateway.info.id ${JSON.stringify(extId)} differs from spec.apiId ${JSON.stringify(spec.apiId)}`,
        hint: "the gateway refuses a definition whose id does not match the API it patches: make them equal, or drop info.id",
      },
    ];
  },
  attach: (spec, document) => ({ ...spec, definition: document }),
};

/** Operation 1: PATCH {base_url}/gw/apis/oas/{apiID}. The API must exist already. */
export const apiDefinitionKind: KindModule = {
  kind: "ApiDefinition",
  schemaFile: "api-definition.schema.json",
  interface: "gateway",
  summary: "API definition in OpenAPI format (patched; cannot be created)",
  secretFields: [],
  serverOwnedFields: [],
  deprecatedFields: {},
  references: () => [],
  postApply: apiDefinitionChecks,
  identity: (spec) => `api:${str(spec, "apiId")}`,
  request(spec: Spec): KindRequest {
    const query = Object.fromEntries(Object.entries((spec.query ?? {}) as Spec).map(([k, v]) => [k, typeof v === "string" ? v.trim() : String(v)]));
    return {
      address: { apiID: String(spec.apiId) },
      create: undefined,
      update: "patchApi",
      query,
      body: spec.definition,
      compare: { query, definition: spec.definition },
      notes: [],
    };
  },
  attached: openApiDocument,
  deactivation: {
    operation: "patchApi",
    field: "definition.x-gw-api-gateway.info.state.active",
    before: () => true,
    after: false,
    effect: "info.state.active: false",
    query: (applied) => (applied.query ?? {}) as Spec,
    body(applied) {
      // without the extension, the patch would replace the API's whole extension with none
      if ((applied.definition as Spec | undefined)?.["x-gw-api-gateway"] === undefined) return undefined;
      const definition = structuredClone(applied.definition) as Record<string, unknown>;
      const ext = definition["x-gw-api-gateway"] as Record<string, unknown>;
      const info = (ext.info ??= {}) as Record<string, unknown>;
      info.state = { ...(info.state as Record<string, unknown> | undefined), active: false };
      return definition;
    },
    refusal: {
      reason: "its last definition carries no gateway extension (or sensitive values), and sending one would replace the API's whole extension",
      hint: "put it back with x-gw-api-gateway.info.state.active: false, apply, then remove it",
    },
  },
  check(spec: Spec): RuleFinding[] {
    const findings: RuleFinding[] = [];
    const query = (spec.query ?? {}) as Spec;
    if (query.authentication === true && spec.definition !== undefined) {
      const security = (spec.definition as Spec).security;
      if (!Array.isArray(security) || security.length === 0) {
        findings.push({
          path: ["spec", "query", "authentication"],
          message: "`authentication: true` needs a `security` requirement in the OpenAPI document",
          hint: "add `security` (and `components.securitySchemes`) to the document, or set authentication: false",
        });
      }
    }
    return findings;
  },
};
