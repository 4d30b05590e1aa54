import { contentHash } from "./canonical.js";
import type { KindModule, KindRequest, Spec } from "./kind.js";
import { idMember } from "./spec-fields.js";

/** Operation 6: POST {llm_api_url}/llm-settings (create only). */
export const llmSettingsKind: KindModule<"LlmSettings"> = {
  kind: "LlmSettings",
  schemaFile: "llm-settings.schema.json",
  interface: "llm",
  summary: "LLM settings (created; cannot be updated)",
  secretFields: [],
  serverOwnedFields: [],
  deprecatedFields: {},
  references: () => [],
  identity: () => undefined,
  // settings carry no name: the same settings are the same content
  objectKeys: (_address, compare) => ({ content: `LLM settings ${contentHash(compare)}` }),
  request(spec: Spec): KindRequest {
    const data = { type: spec.type ?? "llm-settings", attributes: spec.attributes ?? {} };
    return { address: {}, create: "createLlmSettings", update: undefined, query: {}, body: { data }, compare: data };
  },
  noUpdate: {
    reason: "the LLM-settings interface offers no update",
    hint: "change the settings in the LLM service by hand and set the spec to match, or give the resource a new metadata.name to create new settings",
  },
  serverId: { read: (answer) => idMember((answer as Spec | undefined)?.data, "id") },
  check: () => [],
};
