import type { KindModule, KindRequest, RequestContext, Spec } from "./kind.js";
import { apiRefsIn, idMember, idsIn, withApiId } from "./spec-fields.js";

/** Operation 5: POST {portal_api_url}/products (create only). */
export const apiProductKind: KindModule<"ApiProduct"> = {
  kind: "ApiProduct",
  schemaFile: "api-product.schema.json",
  interface: "portal",
  summary: "API product of the portal (created; cannot be updated)",
  secretFields: [],
  serverOwnedFields: [],
  deprecatedFields: {},
  references: (spec: Spec) => apiRefsIn(spec.APIDetails, ["spec", "APIDetails"]),
  referencedApiIds: (compare) => idsIn(compare.APIDetails, "APIID"),
  identity: () => undefined,
  // the portal ids products itself: a product is known again by its Name
  objectKeys: (_address, compare) => (typeof compare.Name === "string" ? { content: `product named ${JSON.stringify(compare.Name)}` } : {}),
  request(spec: Spec, ctx: RequestContext): KindRequest {
    const body: Record<string, unknown> = { ...spec, IsDocumentationOnly: spec.IsDocumentationOnly ?? false };
    if (Array.isArray(spec.APIDetails)) body.APIDetails = spec.APIDetails.map((d) => withApiId(d, "APIID", ctx.apiIdOf));
    return { address: {}, create: "createProduct", update: undefined, query: {}, body, compare: body };
  },
  noUpdate: {
    reason: "the portal interface offers no update for API products",
    hint: "change the product in the portal by hand and set the spec to match, or give it a new metadata.name to create a new product (the old one stays until removed in the portal)",
  },
  serverId: { read: (answer) => idMember(answer, "ID") },
  check: () => [],
};
