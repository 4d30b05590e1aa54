/**
 * The gateway's, dashboard's and LLM service's answers: `GET /gw/oauth/clients/{apiID}` (a list
 * of clients, with their secrets), `GET /gw/org/keys/{keyID}` (a session object), the
 * dashboard's `GET /api/hooks` (`{ "hooks": [...], "pages" }`) and the LLM service's
 * `GET /llm-settings` (a JSON:API-style `data` list, or the list itself).
 */
import { dashboardWebhookKind } from "../../kinds/dashboard-webhook.js";
import { llmSettingsKind } from "../../kinds/llm-settings.js";
import { oauthClientKind } from "../../kinds/oauth-client.js";
import { orgKeyKind } from "../../kinds/org-key.js";
import { resourceName } from "../api-document.js";
import type { ImportedResource, Origin } from "../model.js";
import { isRecord } from "../model.js";
import { adoptAnnotation } from "../../plan/names/adopt-annotation.js";
import { pick } from "./answer-shapes.js";
import type { Shape } from "./answer-shapes.js";

export function oauthClient(apiId: string, c: Record<string, unknown>, origin: Origin): ImportedResource | string {
  if (typeof c.client_id !== "string" || c.client_id === "") return "an OAuth client needs a client_id";
  const { kept, unmanaged } = pick(c, { description: "string", redirect_uri: "string", policy_id: "string", meta_data: "object", secret: "string" }, [
    "client_id",
    "api_id",
  ]);
  if (kept.secret === "") delete kept.secret;
  return {
    kind: oauthClientKind.kind,
    name: resourceName(`${apiId}-${c.client_id}`),
    spec: { apiId, clientId: c.client_id, ...kept },
    origin,
    sourceId: `oauth-client:${apiId}/${c.client_id}`,
    unmanaged,
  };
}

const orgKeyShapes: Readonly<Record<string, Shape>> = {
  access_rights: "object",
  alias: "string",
  allowance: "number",
  apply_policies: "strings",
  basic_auth_data: "object",
  certificate: "string",
  data_expires: "integer",
  enable_detailed_recording: "boolean",
  enable_http_signature_validation: "boolean",
  expires: "integer",
  hmac_enabled: "boolean",
  hmac_string: "string",
  is_inactive: "boolean",
  jwt_data: "object",
  max_query_depth: "integer",
  meta_data: "object",
  monitor: "object",
  oauth_client_id: "string",
  org_id: "string",
  per: "number",
  quota_max: "integer",
  quota_renewal_rate: "integer",
  rate: "number",
  rsa_certificate_id: "string",
  session_lifetime: "integer",
  smoothing: "object",
  tags: "strings",
  throttle_interval: "number",
  throttle_retry_limit: "integer",
};

/** What the gateway keeps of a session that is no setting: counters and timestamps it writes itself. */
const gatewayWritten = ["quota_remaining", "quota_renews", "last_updated", "last_check", "date_created", "id_extractor_deadline", "oauth_keys"];

export function orgKey(s: Record<string, unknown>, keyIdHint: string | undefined, origin: Origin): ImportedResource | string {
  const keyId = typeof s.org_id === "string" && s.org_id !== "" ? s.org_id : keyIdHint;
  if (keyId === undefined) return "an organisation key's answer needs its org_id (the key's id is the organisation's)";
  const { kept, unmanaged } = pick(s, orgKeyShapes, gatewayWritten);
  if (kept.hmac_string === "") delete kept.hmac_string;
  if (isRecord(kept.basic_auth_data) && Object.values(kept.basic_auth_data).every((v) => v === "")) delete kept.basic_auth_data;
  return {
    kind: orgKeyKind.kind,
    name: resourceName(keyId),
    spec: { keyId, ...kept },
    // the key exists at its own id: the annotation makes the first write an update, not a create
    annotations: { [adoptAnnotation]: keyId },
    origin,
    sourceId: `org-key:${keyId}`,
    unmanaged: [...unmanaged, ...gatewayWritten.filter((k) => k in s)],
  };
}

export function dashboardWebhook(h: Record<string, unknown>, origin: Origin): ImportedResource | string {
  if (typeof h.id !== "string" || h.id === "" || typeof h.method !== "string" || typeof h.target_path !== "string")
    return "a dashboard hook needs an id, a method and a target_path";
  const headerMap = isRecord(h.header_map) && Object.values(h.header_map).every((v) => typeof v === "string") ? h.header_map : undefined;
  const { kept, unmanaged } = pick(h, { name: "string", method: "string", target_path: "string" }, ["id", "header_map"]);
  const label = typeof h.name === "string" && h.name !== "" ? h.name : h.id;
  return {
    kind: dashboardWebhookKind.kind,
    name: resourceName(label),
    spec: { ...kept, ...(headerMap === undefined || Object.keys(headerMap).length === 0 ? {} : { header_map: headerMap }) },
    annotations: { [adoptAnnotation]: h.id },
    origin,
    sourceId: `dashboard-webhook:${h.id}`,
    unmanaged,
  };
}

const llmAttributeShapes: Readonly<Record<string, Shape>> = {
  max_length: "integer",
  max_tokens: "integer",
  min_length: "integer",
  metadata: "object",
  model_name: "string",
  repetition_penalty: "number",
  seed: "integer",
  stop_words: "strings",
  temperature: "number",
  top_k: "integer",
  top_p: "number",
  system_prompt: "string",
};

export function llmSettings(d: Record<string, unknown>, origin: Origin): ImportedResource | string {
  const id = typeof d.id === "string" || Number.isInteger(d.id) ? String(d.id) : undefined;
  if (id === undefined || id === "" || !isRecord(d.attributes)) return "LLM settings need an id and attributes (`{ id, type, attributes }`)";
  const { kept, unmanaged } = pick(d.attributes, llmAttributeShapes);
  const label = typeof kept.model_name === "string" ? `${kept.model_name}-${id}` : `llm-settings-${id}`;
  return {
    kind: llmSettingsKind.kind,
    name: resourceName(label),
    spec: { attributes: kept },
    annotations: { [adoptAnnotation]: id },
    origin,
    sourceId: `llm-settings:${id}`,
    unmanaged: unmanaged.map((u) => `attributes.${u}`),
  };
}
