import type { KindModule, KindRequest, Spec } from "./kind.js";
import { stringField } from "./spec-fields.js";

/** Header names that carry credentials (matched anywhere in the name, any case). */
export const credentialHeader = "auth|token|key|secret|cookie|passw|credential|signature|session|bearer";

/** Operation 10: POST {base_url}/api/hooks (create only; the answer carries no id). */
export const dashboardWebhookKind: KindModule<"DashboardWebhook"> = {
  kind: "DashboardWebhook",
  schemaFile: "dashboard-webhook.schema.json",
  interface: "dashboard",
  summary: "webhook of the dashboard (created; cannot be updated)",
  // credential-like headers only (Authorization, *token*, *key*, *secret*, cookies …): `X-Source: gitops`
  // is shown as it is; a header whose value comes from ${env:}/${file:} is sensitive in any case
  secretFields: [`header_map./${credentialHeader}/`],
  serverOwnedFields: [],
  deprecatedFields: {},
  references: () => [],
  // The dashboard refuses a second hook with the same name, method and target (409).
  identity: (spec) => `dashboard-webhook:${stringField(spec, "method")} ${stringField(spec, "target_path")} ${stringField(spec, "name") ?? ""}`,
  // what the dashboard itself refuses twice (409): the same name, method and target
  objectKeys: (_address, compare) => ({ content: `dashboard hook ${JSON.stringify([compare.name ?? "", compare.method, compare.target_path])}` }),
  request(spec: Spec): KindRequest {
    const body = { name: spec.name ?? "", method: spec.method, target_path: spec.target_path, header_map: spec.header_map ?? {} };
    return { address: {}, create: "createDashboardWebhook", update: undefined, query: {}, body, compare: body };
  },
  // The dashboard names its hooks, but the create's answer carries no id: none is read, and the
  // one the dashboard shows is what an adoption records.
  serverId: { read: () => undefined },
  noUpdate: {
    reason: "the dashboard interface offers no update for webhooks",
    hint: "change the hook in the dashboard by hand and set the spec to match, or give the resource a new name and value to create another hook",
  },
  // Sending a create again is safe: the dashboard refuses a duplicate with 409.
  settlesByResend: {
    status: 409,
    sameObject: (attempted, compare) => ["name", "method", "target_path"].every((k) => (attempted[k] ?? "") === (compare[k] ?? "")),
    note: "settled by sending the create again: the dashboard answered 409 (a hook with this name, method and target exists), so the earlier create had happened; the dashboard returns no id",
  },
  check: () => [],
};
