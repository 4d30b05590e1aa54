import type { KindModule, KindRequest, RequestContext, RuleFinding, Spec } from "./kind.js";
import { classifyOrgKey } from "./breaking/access.js";
import { apiRefsIn, deprecationFindings, withoutFields, stringField, withApiId, idsIn } from "./spec-fields.js";

const deprecatedFields = {
  apply_policy_id: "apply_policies",
  enable_detail_recording: "enable_detailed_recording",
};

/**
 * The gateway stores the session under the path's key id and finds an organisation's limits by
 * looking up the session whose key is the organisation's id: a key under another id than its
 * `org_id` limits nothing (issue 30).
 */
function organisationMismatch(spec: Spec): RuleFinding[] {
  const orgId = spec.org_id;
  if (typeof orgId !== "string" || orgId === "" || orgId === spec.keyId) return [];
  return [
    {
      path: ["spec", "keyId"],
      message: `keyId ${JSON.stringify(spec.keyId)} is not the organisation's id ${JSON.stringify(orgId)}: the gateway looks the limits of organisation ${JSON.stringify(orgId)} up under the key ${JSON.stringify(orgId)}, so this key would limit nothing`,
      hint: `set keyId: ${orgId} (an organisation key's id is its organisation's id; the key is written to /gw/org/keys/${orgId})`,
    },
  ];
}

/** Operation 7: POST {base_url}/gw/org/keys/{keyID} (upsert; `reset_quota=1` resets the quota). */
export const orgKeyKind: KindModule<"OrgKey"> = {
  classifyUpdate: classifyOrgKey,
  kind: "OrgKey",
  schemaFile: "org-key.schema.json",
  interface: "gateway",
  summary: "organisation-level access key (upserted)",
  secretFields: ["hmac_string", "basic_auth_data", "jwt_data", "oauth_keys"],
  serverOwnedFields: ["last_updated"],
  deprecatedFields,
  references: (spec: Spec) => apiRefsIn(spec.access_rights, ["spec", "access_rights"]),
  referencedApiIds: (compare) => idsIn(compare.access_rights, "api_id"),
  identity: (spec) => `org-key:${stringField(spec, "keyId")}`,
  objectKeys: (address) => (address.keyID === undefined ? {} : { address: `org-key:${address.keyID}` }),
  request(spec: Spec, ctx: RequestContext): KindRequest {
    const body = withoutFields(spec, ["keyId", "quotaResetTrigger", "last_updated"]);
    if (body.access_rights !== null && typeof body.access_rights === "object") {
      body.access_rights = Object.fromEntries(Object.entries(body.access_rights).map(([label, rights]) => [label, withApiId(rights, "api_id", ctx.apiIdOf)]));
    }
    return {
      address: { keyID: String(spec.keyId) },
      create: "upsertOrgKey",
      update: "upsertOrgKey",
      query: {},
      body,
      compare: body,
      ...(typeof spec.quotaResetTrigger === "string" ? { trigger: spec.quotaResetTrigger } : {}),
    };
  },
  deactivation: {
    operation: "upsertOrgKey",
    field: "is_inactive",
    before: (applied) => applied.is_inactive ?? false,
    after: true,
    effect: "is_inactive: true",
    loss: "its holders lose access",
    query: () => ({}),
    body: (applied) => ({ ...applied, is_inactive: true }),
    refusal: {
      reason: "the key's last body holds sensitive values the state does not keep, and the write replaces the whole key",
      hint: "put it back with is_inactive: true, apply, then remove it",
    },
    // the upsert replaces the whole key: the spec's body, with is_inactive false unless it says otherwise
    reactivation: {
      declaresInactive: (compare) => compare.is_inactive === true,
      body: (sent) => (sent !== null && typeof sent === "object" ? { ...sent, is_inactive: false } : sent),
    },
  },
  check(spec: Spec): RuleFinding[] {
    const findings = [...deprecationFindings(spec, deprecatedFields), ...organisationMismatch(spec)];
    if ("last_updated" in spec) {
      findings.push({
        path: ["spec", "last_updated"],
        key: true,
        severity: "warning",
        message: "`last_updated` is set by the gateway to the time of each write; the declared value is ignored",
        hint: "remove `last_updated`",
      });
    }
    return findings;
  },
};
