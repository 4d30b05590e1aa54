/**
 * The table kinds.test.ts runs: for each kind a valid resource (here), and invalid variants, each
 * expected to give one precise finding (kind-cases-gateway.ts, kind-cases-other.ts).
 */
export const head = (kind: string, name = "sample"): string => `apiVersion: gatesync.dev/v1\nkind: ${kind}\nmetadata:\n  name: ${name}\nspec:\n`;

/** An ApiDefinition that other kinds can reference as `petstore`. */
export const petstore = `${head("ApiDefinition", "petstore")}  apiId: petstore-v1
  definition:
    openapi: 3.0.3
    info: { title: Petstore, version: "1" }
    paths: {}
`;

export interface Case {
  readonly name: string;
  readonly yaml: string;
  readonly code: string;
  readonly path?: string;
  /** Token whose first occurrence is where the finding must point. */
  readonly at: string;
  readonly message: RegExp;
  readonly severity?: "error" | "warning";
  readonly appTypeProviders?: number[];
}

export const valid: Record<string, string> = {
  ApiDefinition: petstore,
  OAuthClient: `${head("OAuthClient")}  apiRef: petstore\n  clientId: c1\n  redirect_uri: https://x/cb\n  policy_id: p1\n  meta_data: null\n  secret: \${env:S}\n`,
  OrgKey: `${head("OrgKey")}  keyId: k1\n  rate: 10\n  per: 1\n  quota_max: -1\n  access_rights:\n    a:\n      apiRef: petstore\n      versions: [Default]\n`,
  ClientType: `${head("ClientType")}  providerId: 1\n  clientTypeId: 2\n  Name: Web\n  ResponseTypes: code, token\n  GrantType: authorization_code,refresh_token\n`,
  ApiProduct: `${head("ApiProduct")}  Name: p\n  ProviderID: 1\n  APIDetails:\n    - apiRef: petstore\n    - APIID: raw-id\n`,
  PortalWebhook: `${head("PortalWebhook")}  Name: w\n  URL: https://h/x\n  Method: POST\n  Timeout: 0\n  Events: [AccessRequestApproved]\n`,
  DashboardWebhook: `${head("DashboardWebhook")}  method: POST\n  target_path: https://h/x\n  header_map: { X-Token: abc }\n`,
  LlmSettings: `${head("LlmSettings")}  attributes:\n    model_name: m\n    temperature: 0.5\n    stop_words: [a]\n    system_prompt: hi\n`,
};
