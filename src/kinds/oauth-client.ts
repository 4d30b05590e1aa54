import type { KindModule, KindRequest, RequestContext, Spec } from "./kind.js";
import { str } from "./kind.js";

/** Operation 2: PUT {base_url}/gw/oauth/clients/{apiID}/{keyName}. The client must exist already. */
export const oauthClientKind: KindModule<"OAuthClient"> = {
  kind: "OAuthClient",
  schemaFile: "oauth-client.schema.json",
  interface: "gateway",
  summary: "OAuth client of an API (updated; cannot be created)",
  secretFields: ["secret"],
  serverOwnedFields: [],
  deprecatedFields: {},
  references: (spec: Spec) => {
    const name = str(spec, "apiRef");
    return name === undefined ? [] : [{ path: ["spec", "apiRef"], kind: "ApiDefinition", name }];
  },
  identity: (spec, apiIdOf) => {
    const ref = str(spec, "apiRef");
    const apiId = ref === undefined ? str(spec, "apiId") : apiIdOf(ref);
    return apiId === undefined ? undefined : `oauth-client:${apiId}/${str(spec, "clientId")}`;
  },
  objectKeys: (address) =>
    address.apiID === undefined || address.keyName === undefined ? {} : { address: `oauth-client:${address.apiID}/${address.keyName}` },
  request(spec: Spec, ctx: RequestContext): KindRequest {
    const ref = str(spec, "apiRef");
    const apiId = ref === undefined ? String(spec.apiId) : (ctx.apiIdOf(ref) ?? "");
    // The update replaces these four wholesale: a field left out is cleared, so it is sent
    // (and compared) as its empty value.
    const compare = {
      description: str(spec, "description") ?? "",
      meta_data: spec.meta_data ?? null,
      policy_id: str(spec, "policy_id") ?? "",
      redirect_uri: str(spec, "redirect_uri") ?? "",
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
