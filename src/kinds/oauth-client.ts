import type { KindModule, KindRequest, RequestContext, Spec } from "./kind.js";
import { stringField } from "./spec-fields.js";
import { classifyOAuthClient } from "./breaking/access.js";

/** Operation 2: PUT {base_url}/gw/oauth/clients/{apiID}/{keyName}. The client must exist already. */
export const oauthClientKind: KindModule<"OAuthClient"> = {
  classifyUpdate: classifyOAuthClient,
  kind: "OAuthClient",
  schemaFile: "oauth-client.schema.json",
  interface: "gateway",
  summary: "OAuth client of an API (updated; cannot be created)",
  secretFields: ["secret"],
  serverOwnedFields: [],
  deprecatedFields: {},
  references: (spec: Spec) => {
    const name = stringField(spec, "apiRef");
    return name === undefined ? [] : [{ path: ["spec", "apiRef"], kind: "ApiDefinition", name }];
  },
  identity: (spec, apiIdOf) => {
    const ref = stringField(spec, "apiRef");
    const apiId = ref === undefined ? stringField(spec, "apiId") : apiIdOf(ref);
    return apiId === undefined ? undefined : `oauth-client:${apiId}/${stringField(spec, "clientId")}`;
  },
  objectKeys: (address) =>
    address.apiID === undefined || address.keyName === undefined ? {} : { address: `oauth-client:${address.apiID}/${address.keyName}` },
  request(spec: Spec, ctx: RequestContext): KindRequest {
    const ref = stringField(spec, "apiRef");
    const apiId = ref === undefined ? String(spec.apiId) : (ctx.apiIdOf(ref) ?? "");
    // The update replaces these four wholesale: a field left out is cleared, so it is sent
    // (and compared) as its empty value.
    const compare = {
      description: stringField(spec, "description") ?? "",
      meta_data: spec.meta_data ?? null,
      policy_id: stringField(spec, "policy_id") ?? "",
      redirect_uri: stringField(spec, "redirect_uri") ?? "",
      ...(spec.secret === undefined ? {} : { secret: spec.secret }),
    };
    return {
      address: { apiID: apiId, keyName: String(spec.clientId) },
      create: undefined,
      update: "updateOAuthClient",
      query: {},
      body: { api_id: apiId, client_id: spec.clientId, ...compare },
      compare,
      ignoredByUpdate: ["secret"],
    };
  },
  check: () => [],
};
