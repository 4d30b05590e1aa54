/**
 * The sandbox's own description of what the interfaces accept: the request bodies of part 2
 * of the contract (`management-interfaces.md`) with the types the reference
 * (`interface-behaviour.md`) gives. Deliberately independent of gatesync's schemas under
 * `schemas/`: a wrong type there must be caught here, not repeated.
 */
import type { WireType } from "./wire.js";

const strings: WireType = { array: "string" };
const integers: WireType = { array: "integer" };
const anyObject: WireType = { map: "any" };

/** 2.1: the gateway extension `x-gw-api-gateway` (other members: not shown, so not checked). */
export const apiExtension: WireType = {
  object: {
    info: { object: { id: "string", name: "string", state: { object: { active: "bool" } } } },
    server: { object: { listenPath: { object: { value: "string", strip: "bool" } } } },
    upstream: { object: { url: "string" } },
  },
};

/** 2.2, operation 2. */
export const oauthClientBody: WireType = {
  object: { api_id: "string", client_id: "string", description: "string", meta_data: anyObject, policy_id: "string", redirect_uri: "string", secret: "string" },
};

/** 2.3, operation 3. */
export const clientTypeBody: WireType = {
  object: { Name: "string", Description: "string", ResponseTypes: "string", GrantType: "string", TokenEndpointAuthMethod: "string", IdpAppType: "string" },
};

/** 2.4, operation 5 (request fields). */
export const productBody: WireType = {
  object: {
    APIDetails: { array: { object: { APIID: "string", Description: "string", OASUrl: "string" } } },
    Catalogues: integers,
    CID: "string",
    Content: "string",
    DCREnabled: "bool",
    Description: "string",
    DisplayName: "string",
    Feature: "bool",
    IsDocumentationOnly: "bool",
    Name: "string",
    ProviderID: "integer",
    Scopes: "string",
    SpecDetails: { array: { object: { SpecAlias: "string", OASUrl: "string" } } },
    Tags: integers,
    Templates: integers,
  },
};

const smoothing: WireType = { object: { delay: "integer", enabled: "bool", step: "integer", threshold: "integer", trigger: "number" } };

const limit: WireType = {
  object: {
    max_query_depth: "integer",
    per: "number",
    quota_max: "integer",
    quota_remaining: "integer",
    quota_renewal_rate: "integer",
    quota_renews: "integer",
    rate: "number",
    smoothing,
    throttle_interval: "number",
    throttle_retry_limit: "integer",
  },
};

const graphqlTypes: WireType = { array: { object: { name: "string", fields: strings } } };

/** An access-rights entry: the contract's members, the published session schema's, and the JSON-RPC/MCP ones production takes. */
const accessRights: WireType = {
  object: {
    allowance_scope: "string",
    allowed_types: graphqlTypes,
    allowed_urls: { array: { object: { url: "string", methods: strings } } },
    api_id: "string",
    api_name: "string",
    disable_introspection: "bool",
    endpoints: {
      array: {
        object: { path: "string", methods: { array: { object: { name: "string", limit: { object: { per: "number", rate: "number", smoothing } } } } } },
      },
    },
    field_access_rights: { array: { object: { field_name: "string", type_name: "string", limits: { object: { max_query_depth: "integer" } } } } },
    json_rpc_methods: { array: anyObject },
    json_rpc_methods_access_rights: anyObject,
    limit,
    mcp_access_rights: anyObject,
    mcp_primitives: { array: anyObject },
    restricted_types: graphqlTypes,
    versions: strings,
  },
};

/** 2.5, operation 7. */
export const orgKeyBody: WireType = {
  object: {
    access_rights: { map: accessRights },
    alias: "string",
    allowance: "number",
    apply_policies: strings,
    apply_policy_id: "string",
    basic_auth_data: anyObject,
    certificate: "string",
    data_expires: "integer",
    date_created: "string",
    enable_detail_recording: "bool",
    enable_detailed_recording: "bool",
    enable_http_signature_validation: "bool",
    expires: "integer",
    hmac_enabled: "bool",
    hmac_string: "string",
    id_extractor_deadline: "integer",
    is_inactive: "bool",
    jwt_data: anyObject,
    last_check: "integer",
    last_updated: "string",
    max_query_depth: "integer",
    meta_data: anyObject,
    monitor: { object: { trigger_limits: { array: "number" } } },
    oauth_client_id: "string",
    oauth_keys: { map: "string" },
    org_id: "string",
    per: "number",
    post_expiry_action: "string",
    post_expiry_grace_period: "integer",
    quota_max: "integer",
    quota_remaining: "integer",
    quota_renewal_rate: "integer",
    quota_renews: "integer",
    rate: "number",
    rsa_certificate_id: "string",
    session_lifetime: "integer",
    smoothing,
    tags: strings,
    throttle_interval: "number",
    throttle_retry_limit: "integer",
  },
};

/** 2.6, operations 8 and 9 (`Headers` is answer-only: whatever comes is ignored). */
export const portalWebhookBody: WireType = {
  object: { Name: "string", URL: "string", Method: "string", Timeout: "integer", Events: strings, Headers: "any" },
};

/** 2.7, operation 10. */
export const dashboardHookBody: WireType = {
  object: { method: "string", target_path: "string", name: "string", header_map: { map: "string" } },
};

/** 2.8 with the reference's types, operation 6. */
export const llmAttributes = {
  model_name: "string",
  system_prompt: "string",
  temperature: "number",
  top_p: "number",
  repetition_penalty: "number",
  max_tokens: "integer",
  max_length: "integer",
  min_length: "integer",
  top_k: "integer",
  seed: "integer",
  stop_words: strings,
  metadata: anyObject,
} as const satisfies Record<string, WireType>;

export const llmSettingsBody: WireType = { object: { data: { object: { type: "string", attributes: { object: llmAttributes } } } } };

/** 2.9, operation 4. */
export const batchBody: WireType = {
  object: {
    requests: { array: { object: { method: "string", relative_url: "string", headers: { map: "string" }, body: "string" } } },
    suppress_parallel_execution: "bool",
  },
};
