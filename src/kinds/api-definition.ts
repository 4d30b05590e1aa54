import { apiDefinitionChecks, verifyFindings } from "./api-definition-checks.js";
import { batchRouteClaims, mayChangeBatchRoute } from "./batch-route.js";
import type { AttachedDocument, KindModule, KindRequest, Reactivation, RuleFinding, Spec } from "./kind.js";
import { stringField } from "./spec-fields.js";
import { classifyGateway } from "./breaking/gateway.js";
import { classifyOpenApi } from "./breaking/openapi.js";
import { field } from "./breaking/types.js";
import { deactivationBody, deactivationNote, deactivationRefusal } from "./api-deactivation.js";
import { documentMember, materialize, withMember } from "./document-ref.js";

const extensionKey = "x-gw-api-gateway";

/**
 * The definition as sent: a gateway extension carries `info.id` equal to the path's apiID (the
 * gateway refuses one without it, or with another: validate reports a differing one); a
 * definition without the extension is sent without it (the API keeps its current one).
 */
export function withExtensionId(definition: unknown, apiId: string | undefined): unknown {
  if (apiId === undefined || definition === null || typeof definition !== "object") return definition;
  const ext = documentMember(definition, extensionKey);
  if (ext === null || typeof ext !== "object") return definition;
  const info = (ext as Record<string, unknown>).info;
  if (info !== null && typeof info === "object" && (info as Record<string, unknown>).id !== undefined) return definition;
  return withMember(definition, extensionKey, { ...ext, info: { ...(info as object | undefined), id: apiId } });
}

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
    const ext = documentMember(document, extensionKey) as Record<string, unknown> | undefined;
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
  heldMembers: [extensionKey, "security"],
};

/**
 * A deactivated API declared again: a document with the extension says itself whether the API
 * is active (sent as it is); one without it would leave the API's current — switched-off —
 * extension in place, so it gets the extension the deactivation sent, switched on.
 */
function apiReactivation(): Reactivation {
  const stateOf = (definition: unknown): unknown => {
    const info = (documentMember(definition, extensionKey) as { info?: { state?: { active?: unknown } } } | undefined)?.info;
    return info?.state?.active;
  };
  /** The extension the deactivation would send for this document, switched on; undefined when none can be built. */
  const switchedOn = (
    sent: unknown,
    address: Readonly<Record<string, string>>,
    query: Readonly<Record<string, unknown>>,
  ): Record<string, unknown> | undefined => {
    const switchedOff = apiDefinitionKind.deactivation!.body({ query, definition: sent }, address) as Record<string, unknown> | undefined;
    const info = (switchedOff?.[extensionKey] as { info?: { state?: Record<string, unknown> } } | undefined)?.info;
    if (info?.state === undefined) return undefined;
    info.state = { ...info.state, active: true };
    return switchedOff;
  };
  return {
    declaresInactive: (compare) => stateOf(compare.definition) === false,
    refusal(compare, address) {
      if (documentMember(compare.definition, extensionKey) !== undefined) return undefined;
      if (switchedOn(materialize(compare.definition), address, (compare.query ?? {}) as Spec) !== undefined) return undefined;
      return {
        reason:
          "it was deactivated, and its document has no x-gw-api-gateway extension: sent as it is, the API would keep its switched-off extension, and none can be built from it",
        hint: "add the complete x-gw-api-gateway extension with info.state.active: true to the document, or switch the API on by hand and run `gatesync state resolve <id> --accept`",
      };
    },
    body(sent, address, query) {
      if (documentMember(sent, extensionKey) !== undefined) return sent;
      // the plan blocked a reactivation no body can make (refusal): this one is built
      return switchedOn(sent, address, query) ?? sent;
    },
  };
}

/** Operation 1: PATCH {base_url}/gw/apis/oas/{apiID}. The API must exist already. */
export const apiDefinitionKind: KindModule<"ApiDefinition"> = {
  kind: "ApiDefinition",
  schemaFile: "api-definition.schema.json",
  interface: "gateway",
  summary: "API definition in OpenAPI format (patched; cannot be created)",
  secretFields: [],
  serverOwnedFields: [],
  deprecatedFields: {},
  references: () => [],
  postApply: apiDefinitionChecks,
  batchRoute: { claims: batchRouteClaims, mayChange: mayChangeBatchRoute },
  identity: (spec) => `api:${stringField(spec, "apiId")}`,
  objectKeys: (address) => (address.apiID === undefined ? {} : { address: `api:${address.apiID}` }),
  request(spec: Spec): KindRequest {
    const query = Object.fromEntries(Object.entries((spec.query ?? {}) as Spec).map(([k, v]) => [k, typeof v === "string" ? v.trim() : String(v)]));
    const definition = withExtensionId(spec.definition, stringField(spec, "apiId"));
    return {
      address: { apiID: String(spec.apiId) },
      create: undefined,
      update: "patchApi",
      query,
      body: definition,
      compare: { query, definition },
      notes: [],
    };
  },
  attached: openApiDocument,
  // OAuth clients and org keys name an API by resource; their requests carry its gateway id
  providedApiId: (spec) => (typeof spec.apiId === "string" ? spec.apiId : undefined),
  // the gateway's own settings, then the OpenAPI document's change as its consumers see it
  classifyUpdate: (before, after) => [...classifyGateway(before, after), ...classifyOpenApi(field(before, "definition"), field(after, "definition"))],
  deactivation: {
    operation: "patchApi",
    field: "definition.x-gw-api-gateway.info.state.active",
    before: () => true,
    after: false,
    effect: "info.state.active: false",
    loss: "its callers lose it",
    query: (applied) => (applied.query ?? {}) as Spec,
    // a complete extension, switched off (api-deactivation.ts): the gateway refuses a partial one
    body: (applied, address) => deactivationBody(applied, String(address.apiID)),
    note: deactivationNote,
    refusal: deactivationRefusal,
    reactivation: apiReactivation(),
  },
  check(spec: Spec): RuleFinding[] {
    const findings: RuleFinding[] = verifyFindings(spec);
    const query = (spec.query ?? {}) as Spec;
    if (query.authentication === true && spec.definition !== undefined) {
      const security = documentMember(spec.definition, "security");
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
