import type { KindModule, KindRequest, RequestContext, RuleContext, RuleFinding, Spec } from "./kind.js";
import { normaliseCsv, withoutFields } from "./spec-fields.js";

const derivedByProvider = ["TokenEndpointAuthMethod", "GrantType", "ResponseTypes"];

/** Operation 3: PUT {portal_api_url}/oauth-providers/{provider_id}/client-types/{client_type_id}. */
export const clientTypeKind: KindModule<"ClientType"> = {
  kind: "ClientType",
  schemaFile: "client-type.schema.json",
  interface: "portal",
  summary: "OAuth client type of an identity provider (updated; cannot be created)",
  secretFields: [],
  // ID and timestamps come back in responses only; for app-type providers the provider
  // rewrites the three derived fields (see plan normalisation).
  serverOwnedFields: ["ID", "CreatedAt", "UpdatedAt"],
  deprecatedFields: {},
  references: () => [],
  identity: (spec) => `client-type:${String(spec.providerId)}/${String(spec.clientTypeId)}`,
  objectKeys: (address) =>
    address.provider_id === undefined || address.client_type_id === undefined
      ? {}
      : { address: `client-type:${address.provider_id}/${address.client_type_id}` },
  request(spec: Spec, ctx: RequestContext): KindRequest {
    // Optional enums are left out when not given (an empty string is not one of their values),
    // but compare as empty so that leaving them out and writing "" are the same.
    const body: Record<string, unknown> = {
      Name: spec.Name,
      Description: spec.Description ?? "",
      ResponseTypes: normaliseCsv(spec.ResponseTypes),
      GrantType: normaliseCsv(spec.GrantType),
      ...(spec.TokenEndpointAuthMethod === undefined ? {} : { TokenEndpointAuthMethod: spec.TokenEndpointAuthMethod }),
      ...(spec.IdpAppType === undefined ? {} : { IdpAppType: spec.IdpAppType }),
    };
    const normalised = { TokenEndpointAuthMethod: "", IdpAppType: "", ...body };
    const appType = typeof spec.providerId === "number" && ctx.appTypeProviders.has(spec.providerId);
    return {
      address: { provider_id: String(spec.providerId), client_type_id: String(spec.clientTypeId) },
      create: undefined,
      update: "updateClientType",
      query: {},
      body,
      // The provider overwrites these from IdpAppType: comparing them would never settle.
      compare: appType ? withoutFields(normalised, derivedByProvider) : normalised,
      notes: appType ? [`provider ${String(spec.providerId)} derives ${derivedByProvider.join(", ")} from IdpAppType; they are sent but not compared`] : [],
    };
  },
  check(spec: Spec, ctx: RuleContext): RuleFinding[] {
    const providerId = spec.providerId;
    if (ctx.appTypeProviders === undefined || typeof providerId !== "number") return [];
    if (ctx.appTypeProviders.has(providerId) && spec.IdpAppType === undefined) {
      return [
        {
          path: ["spec"],
          message: `provider ${providerId} registers applications by type: \`IdpAppType\` is required`,
          hint: "add `IdpAppType: web | native | browser | service` (the provider derives TokenEndpointAuthMethod, GrantType and ResponseTypes from it)",
        },
      ];
    }
    return [];
  },
};
