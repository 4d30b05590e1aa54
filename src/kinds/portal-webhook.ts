import type { KindModule, KindRequest, Spec } from "./kind.js";
import { idMember, stringField } from "./spec-fields.js";

/** Operations 9 (POST {portal_api_url}/webhooks) and 8 (PUT {portal_api_url}/webhooks/{id}). */
export const portalWebhookKind: KindModule<"PortalWebhook"> = {
  kind: "PortalWebhook",
  schemaFile: "portal-webhook.schema.json",
  interface: "portal",
  summary: "webhook of the portal (created, then updated by id)",
  // A webhook URL often carries a token in its query string.
  secretFields: ["URL"],
  serverOwnedFields: ["ID", "Headers", "CreatedAt", "UpdatedAt"],
  deprecatedFields: {},
  references: () => [],
  identity: (spec) => {
    const id = stringField(spec, "webhookId");
    return id === undefined ? undefined : `portal-webhook:${id}`;
  },
  // by its id once known (the spec's webhookId, the server's on a record); by its Name for a likeness
  objectKeys: (address, compare) => ({
    ...(address.webhook_id === undefined ? {} : { address: `portal-webhook:${address.webhook_id}` }),
    ...(typeof compare.Name === "string" ? { content: `portal-webhook named ${JSON.stringify(compare.Name)}` } : {}),
  }),
  request(spec: Spec): KindRequest {
    const body = {
      Name: spec.Name,
      URL: spec.URL,
      Method: spec.Method,
      Timeout: spec.Timeout ?? 0,
      // a set: the order it is written in means nothing
      Events: [...((spec.Events ?? []) as string[])].sort(),
    };
    return {
      address: typeof spec.webhookId === "string" ? { webhook_id: spec.webhookId } : {},
      create: typeof spec.webhookId === "string" ? undefined : "createPortalWebhook",
      update: "updatePortalWebhook",
      query: {},
      body,
      compare: body,
    };
  },
  serverId: { read: (answer) => idMember(answer, "ID"), param: "webhook_id" },
  check: () => [],
};
