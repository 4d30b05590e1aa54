/**
 * The sources an import reads, written by the tests from the formats' documentation (README.md
 * says where each fact comes from): the services' saved answers, made from what the sandbox
 * holds in the shapes of reference/published/specs/, and the sync tool's dump.
 */
import { mkdir, writeFile } from "node:fs/promises";
import path from "node:path";

type Json = Record<string, unknown>;

/** What a provider derives from IdpAppType (the portal's answer carries them: client-type-rules.ts in the sandbox). */
const derived: Record<string, Json> = {
  service: { TokenEndpointAuthMethod: "client_secret_basic", GrantType: "client_credentials", ResponseTypes: "token" },
};

const writeJson = (file: string, value: unknown): Promise<void> => writeFile(file, `${JSON.stringify(value, null, 2)}\n`);

/** The answers of the services' list and read endpoints for what `snapshot` (the sandbox's objects) holds; the secret values, by the reference names import gives them. */
export async function savedAnswers(snapshot: Record<string, unknown>, dir: string): Promise<{ secrets: string[] }> {
  const answers = path.join(dir, "answers");
  const exports = path.join(dir, "exports");
  await mkdir(answers, { recursive: true });
  await mkdir(exports, { recursive: true });
  const list = (k: string): Json[] => (snapshot[k] ?? []) as Json[];
  // GET /gw/apis/oas/{apiID}/export: the document with the extension under the vendor's key
  for (const api of list("apis").filter((a) => a.id === "petstore-v1" || a.id === "orders-api")) {
    const ext = api.extension as Json;
    const info = ext.info as Json;
    await writeJson(path.join(exports, `${String(api.id)}.json`), {
      openapi: "3.0.3",
      info: { title: info.name, version: "1.0.0" },
      paths: {},
      "x-tyk-api-gateway": ext,
    });
  }
  const values: Record<string, string> = {};
  // GET /gw/oauth/clients/{apiID}: a list of clients, secrets included
  const byApi = new Map<string, Json[]>();
  for (const c of list("oauthClients")) byApi.set(String(c.apiId), [...(byApi.get(String(c.apiId)) ?? []), c]);
  for (const [apiId, clients] of byApi) {
    await writeJson(
      path.join(answers, `oauth-clients-${apiId}.json`),
      clients.map((c) => ({
        client_id: c.client_id,
        secret: c.secret,
        redirect_uri: c.redirect_uri,
        policy_id: c.policy_id,
        meta_data: c.meta_data,
        description: c.description,
        api_id: apiId,
      })),
    );
    for (const c of clients)
      if (c.secret !== "") values[`OAUTH_CLIENT_${`${apiId}_${String(c.client_id)}`.toUpperCase().replace(/[^A-Z0-9]+/g, "_")}_SECRET`] = String(c.secret);
  }
  // GET /oauth-providers/{id}/client-types
  const byProvider = new Map<number, Json[]>();
  for (const { providerId, ...ct } of list("clientTypes")) byProvider.set(Number(providerId), [...(byProvider.get(Number(providerId)) ?? []), ct]);
  for (const [id, cts] of byProvider) {
    await writeJson(
      path.join(answers, `client-types-${id}.json`),
      cts.map((ct) => ({ ...(derived[String(ct.IdpAppType)] ?? {}), ...ct })),
    );
  }
  // GET /products, GET /webhooks (with Headers), GET /api/hooks ({ hooks, pages }), GET /llm-settings ({ data })
  await writeJson(path.join(answers, "products.json"), list("products"));
  await writeJson(
    path.join(answers, "portal-webhooks.json"),
    list("portalWebhooks").map((w) => ({ Headers: [{ Name: "X-Token", Value: "portal-header-secret" }], ...w })),
  );
  await writeJson(path.join(answers, "dashboard-webhooks.json"), {
    hooks: list("dashboardHooks").map((h) => ({ api_model: {}, event_timeout: 0, org_id: "acme", template_path: "", ...h })),
    pages: 1,
  });
  await writeJson(path.join(answers, "llm-settings.json"), { data: list("llmSettings") });
  // GET /gw/org/keys/{keyID}: the session object
  for (const k of list("orgKeys")) await writeJson(path.join(answers, `org-key-${String(k.keyId)}.json`), k.session);
  for (const w of list("portalWebhooks")) values[`PORTAL_WEBHOOK_${String(w.Name).toUpperCase()}_URL`] = String(w.URL);
  for (const h of list("dashboardHooks")) {
    for (const [k, v] of Object.entries(h.header_map as Json))
      values[`DASHBOARD_WEBHOOK_${String(h.name).toUpperCase()}_HEADER_MAP_${k.toUpperCase()}`] = String(v);
  }
  for (const k of list("orgKeys")) {
    const s = k.session as Json;
    if (typeof s.hmac_string === "string" && s.hmac_string !== "") values[`ORG_KEY_${String(k.keyId).toUpperCase()}_HMAC_STRING`] = s.hmac_string;
  }
  await writeJson(path.join(dir, "values.json"), values);
  return { secrets: [...Object.values(values), "portal-header-secret"] };
}
