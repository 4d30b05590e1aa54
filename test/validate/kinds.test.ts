/**
 * Table-driven: for each kind, a valid resource, and invalid variants each expected to give
 * one precise finding (code, field path, and the exact line:column of the offending token).
 */
import { afterAll, describe, expect, it } from "vitest";
import { RepositoryValidator } from "../../src/validate/validate-repository.js";
import { positionOf, removeTempRepos, tempRepo } from "../helpers/temp-repo.js";

const validator = new RepositoryValidator();
afterAll(removeTempRepos);

const head = (kind: string, name = "sample"): string => `apiVersion: gatesync.dev/v1\nkind: ${kind}\nmetadata:\n  name: ${name}\nspec:\n`;

/** An ApiDefinition that other kinds can reference as `petstore`. */
const petstore = `${head("ApiDefinition", "petstore")}  apiId: petstore-v1
  definition:
    openapi: 3.0.3
    info: { title: Petstore, version: "1" }
    paths: {}
`;

interface Case {
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

const valid: Record<string, string> = {
  ApiDefinition: petstore,
  OAuthClient: `${head("OAuthClient")}  apiRef: petstore\n  clientId: c1\n  redirect_uri: https://x/cb\n  policy_id: p1\n  meta_data: null\n  secret: \${env:S}\n`,
  OrgKey: `${head("OrgKey")}  keyId: k1\n  rate: 10\n  per: 1\n  quota_max: -1\n  access_rights:\n    a:\n      apiRef: petstore\n      versions: [Default]\n`,
  ClientType: `${head("ClientType")}  providerId: 1\n  clientTypeId: 2\n  Name: Web\n  ResponseTypes: code, token\n  GrantType: authorization_code,refresh_token\n`,
  ApiProduct: `${head("ApiProduct")}  Name: p\n  ProviderID: 1\n  APIDetails:\n    - apiRef: petstore\n    - APIID: raw-id\n`,
  PortalWebhook: `${head("PortalWebhook")}  Name: w\n  URL: https://h/x\n  Method: POST\n  Timeout: 0\n  Events: [AccessRequestApproved]\n`,
  DashboardWebhook: `${head("DashboardWebhook")}  method: POST\n  target_path: https://h/x\n  header_map: { X-Token: abc }\n`,
  LlmSettings: `${head("LlmSettings")}  attributes:\n    model_name: m\n    temperature: 0.5\n    stop_words: [a]\n    system_prompt: hi\n`,
};

const cases: Case[] = [
  // ApiDefinition
  {
    name: "ApiDefinition without apiId",
    yaml: `${head("ApiDefinition")}  definition: { openapi: 3.1.0, info: { title: t, version: "1" }, paths: {} }\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec",
    at: "definition",
    message: /missing required field `apiId`/,
  },
  {
    name: "ApiDefinition with both definition and definitionFile",
    yaml: `${head("ApiDefinition")}  apiId: a\n  definitionFile: x.yaml\n  definition: { openapi: 3.1.0, info: { title: t, version: "1" }, paths: {} }\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec",
    at: "apiId",
    message: /exactly once/,
  },
  {
    name: "ApiDefinition with a relative upstreamURL",
    yaml: `${head("ApiDefinition")}  apiId: a\n  query:\n    upstreamURL: /relative\n  definition: { openapi: 3.1.0, info: { title: t, version: "1" }, paths: {} }\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.query.upstreamURL",
    at: "/relative",
    message: /absolute URL/,
  },
  {
    name: "ApiDefinition with a non-boolean flag",
    yaml: `${head("ApiDefinition")}  apiId: a\n  query:\n    mockResponse: "yes"\n  definition: { openapi: 3.1.0, info: { title: t, version: "1" }, paths: {} }\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.query.mockResponse",
    at: '"yes"',
    message: /must be boolean, not string/,
  },
  {
    name: "ApiDefinition with Swagger 2.0",
    yaml: `${head("ApiDefinition")}  apiId: a\n  definition:\n    openapi: "2.0"\n    info: { title: t, version: "1" }\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.definition.openapi",
    at: '"2.0"',
    message: /OpenAPI 3\.0\.x or 3\.1\.x/,
  },
  {
    name: "ApiDefinition whose OpenAPI breaks the official schema",
    yaml: `${head("ApiDefinition")}  apiId: a\n  definition:\n    openapi: 3.1.0\n    info: { title: t, version: "1" }\n    servers: not-a-list\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.definition.servers",
    at: "not-a-list",
    message: /must be array/,
  },
  {
    name: "ApiDefinition whose OpenAPI paths are malformed",
    yaml: `${head("ApiDefinition")}  apiId: a\n  definition:\n    openapi: 3.0.3\n    info: { title: t, version: "1" }\n    paths:\n      pets: {}\n`,
    code: "OPENAPI_INVALID",
    path: "spec.definition.paths.pets",
    at: "pets",
    message: /.+/,
  },
  {
    name: "ApiDefinition with a mismatched extension id",
    yaml: `${head("ApiDefinition")}  apiId: a\n  definition:\n    openapi: 3.1.0\n    info: { title: t, version: "1" }\n    paths: {}\n    x-gw-api-gateway:\n      info: { id: b }\n`,
    code: "RULE_VIOLATION",
    path: "spec.definition.x-gw-api-gateway.info.id",
    at: "b }",
    message: /differs from spec\.apiId/,
  },
  {
    name: "ApiDefinition with authentication but no security",
    yaml: `${head("ApiDefinition")}  apiId: a\n  query:\n    authentication: true\n  definition: { openapi: 3.1.0, info: { title: t, version: "1" }, paths: {} }\n`,
    code: "RULE_VIOLATION",
    path: "spec.query.authentication",
    at: "true",
    message: /needs a `security`/,
  },
  {
    name: "ApiDefinition verify path with leading slash",
    yaml: `${head("ApiDefinition")}  apiId: a\n  definition: { openapi: 3.1.0, info: { title: t, version: "1" }, paths: {} }\n  verify:\n    - path: /pets\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.verify[0].path",
    at: "/pets",
    message: /without a leading/,
  },
  // OAuthClient
  {
    name: "OAuthClient naming no API",
    yaml: `${head("OAuthClient")}  clientId: c\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec",
    at: "clientId",
    message: /name the API exactly once/,
  },
  {
    name: "OAuthClient with a misspelt field",
    yaml: `${head("OAuthClient")}  apiId: a\n  clientId: c\n  redirect_url: https://x\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.redirect_url",
    at: "redirect_url",
    message: /unknown field `redirect_url`/,
  },
  {
    name: "OAuthClient with meta_data as a string",
    yaml: `${head("OAuthClient")}  apiId: a\n  clientId: c\n  meta_data: oops\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.meta_data",
    at: "oops",
    message: /must be object or null/,
  },
  {
    name: "OAuthClient naming a missing API",
    yaml: `${petstore}---\n${head("OAuthClient")}  apiRef: petstor\n  clientId: c\n`,
    code: "UNRESOLVED_REFERENCE",
    path: "spec.apiRef",
    at: "petstor\n",
    message: /`petstor` does not exist/,
  },
  // OrgKey
  {
    name: "OrgKey with a string rate",
    yaml: `${head("OrgKey")}  keyId: k\n  rate: fast\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.rate",
    at: "fast",
    message: /must be number/,
  },
  {
    name: "OrgKey with a fractional quota",
    yaml: `${head("OrgKey")}  keyId: k\n  quota_max: 1.5\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.quota_max",
    at: "1.5",
    message: /must be integer, not number/,
  },
  {
    name: "OrgKey with deprecated apply_policy_id",
    yaml: `${head("OrgKey")}  keyId: k\n  apply_policy_id: p\n`,
    code: "DEPRECATED_FIELD",
    path: "spec.apply_policy_id",
    at: "apply_policy_id",
    message: /deprecated/,
    severity: "warning",
  },
  {
    name: "OrgKey with deprecated enable_detail_recording",
    yaml: `${head("OrgKey")}  keyId: k\n  enable_detail_recording: true\n`,
    code: "DEPRECATED_FIELD",
    path: "spec.enable_detail_recording",
    at: "enable_detail_recording",
    message: /deprecated/,
    severity: "warning",
  },
  {
    name: "OrgKey access rights naming no API",
    yaml: `${head("OrgKey")}  keyId: k\n  access_rights:\n    a:\n      versions: [x]\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.access_rights.a",
    at: "versions",
    message: /name the API exactly once/,
  },
  {
    name: "OrgKey access rights naming a missing API",
    yaml: `${head("OrgKey")}  keyId: k\n  access_rights:\n    a:\n      apiRef: nowhere\n`,
    code: "UNRESOLVED_REFERENCE",
    path: "spec.access_rights.a.apiRef",
    at: "nowhere",
    message: /`nowhere` does not exist/,
  },
  {
    name: "OrgKey with a bad date_created",
    yaml: `${head("OrgKey")}  keyId: k\n  date_created: yesterday\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.date_created",
    at: "yesterday",
    message: /date-time/,
  },
  // ClientType
  {
    name: "ClientType with an unknown response type",
    yaml: `${head("ClientType")}  providerId: 1\n  clientTypeId: 2\n  Name: n\n  ResponseTypes: code,id_token\n  GrantType: implicit\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.ResponseTypes",
    at: "code,id_token",
    message: /code, token, it_token, none/,
  },
  {
    name: "ClientType with an empty grant list",
    yaml: `${head("ClientType")}  providerId: 1\n  clientTypeId: 2\n  Name: n\n  ResponseTypes: code\n  GrantType: ""\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.GrantType",
    at: '""',
    message: /at least one of: authorization_code/,
  },
  {
    name: "ClientType with a bad auth method",
    yaml: `${head("ClientType")}  providerId: 1\n  clientTypeId: 2\n  Name: n\n  ResponseTypes: code\n  GrantType: pkce\n  TokenEndpointAuthMethod: private_key_jwt\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.TokenEndpointAuthMethod",
    at: "private_key_jwt",
    message: /not allowed/,
  },
  {
    name: "ClientType with a string provider id",
    yaml: `${head("ClientType")}  providerId: "1"\n  clientTypeId: 2\n  Name: n\n  ResponseTypes: code\n  GrantType: pkce\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.providerId",
    at: '"1"',
    message: /must be integer, not string/,
  },
  {
    name: "ClientType without Name",
    yaml: `${head("ClientType")}  providerId: 1\n  clientTypeId: 2\n  ResponseTypes: code\n  GrantType: pkce\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec",
    at: "providerId",
    message: /missing required field `Name`/,
  },
  {
    name: "ClientType of an app-type provider without IdpAppType",
    yaml: `${head("ClientType")}  providerId: 3\n  clientTypeId: 2\n  Name: n\n  ResponseTypes: code\n  GrantType: pkce\n`,
    code: "RULE_VIOLATION",
    path: "spec",
    at: "providerId",
    message: /IdpAppType` is required/,
    appTypeProviders: [3],
  },
  // ApiProduct
  {
    name: "ApiProduct marked documentation-only",
    yaml: `${head("ApiProduct")}  Name: p\n  ProviderID: 1\n  IsDocumentationOnly: true\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.IsDocumentationOnly",
    at: "true",
    message: /must be false/,
  },
  {
    name: "ApiProduct without ProviderID",
    yaml: `${head("ApiProduct")}  Name: p\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec",
    at: "Name",
    message: /missing required field `ProviderID`/,
  },
  {
    name: "ApiProduct with string catalogue ids",
    yaml: `${head("ApiProduct")}  Name: p\n  ProviderID: 1\n  Catalogues: [main]\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.Catalogues[0]",
    at: "main",
    message: /must be integer/,
  },
  {
    name: "ApiProduct API detail naming a missing API",
    yaml: `${head("ApiProduct")}  Name: p\n  ProviderID: 1\n  APIDetails:\n    - apiRef: ghost\n`,
    code: "UNRESOLVED_REFERENCE",
    path: "spec.APIDetails[0].apiRef",
    at: "ghost",
    message: /`ghost` does not exist/,
  },
  // PortalWebhook
  {
    name: "PortalWebhook with a fractional timeout",
    yaml: `${head("PortalWebhook")}  Name: w\n  URL: https://h\n  Method: POST\n  Timeout: 1.5\n  Events: [UserRegistered]\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.Timeout",
    at: "1.5",
    message: /must be integer/,
  },
  {
    name: "PortalWebhook with a negative timeout",
    yaml: `${head("PortalWebhook")}  Name: w\n  URL: https://h\n  Method: POST\n  Timeout: -1\n  Events: [UserRegistered]\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.Timeout",
    at: "-1",
    message: /at least 0/,
  },
  {
    name: "PortalWebhook with an unknown event",
    yaml: `${head("PortalWebhook")}  Name: w\n  URL: https://h\n  Method: POST\n  Events: [UserRegistered, KeyRotated]\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.Events[1]",
    at: "KeyRotated",
    message: /"KeyRotated" is not allowed/,
  },
  {
    name: "PortalWebhook declaring Headers",
    yaml: `${head("PortalWebhook")}  Name: w\n  URL: https://h\n  Method: POST\n  Events: [UserRegistered]\n  Headers: []\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.Headers",
    at: "Headers",
    message: /unknown field `Headers`/,
  },
  // DashboardWebhook
  {
    name: "DashboardWebhook without target_path",
    yaml: `${head("DashboardWebhook")}  method: POST\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec",
    at: "method",
    message: /missing required field `target_path`/,
  },
  {
    name: "DashboardWebhook with a lowercase method",
    yaml: `${head("DashboardWebhook")}  method: post\n  target_path: https://h\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.method",
    at: "post",
    message: /"post" is not allowed/,
  },
  // LlmSettings
  {
    name: "LlmSettings with a string temperature",
    yaml: `${head("LlmSettings")}  attributes:\n    temperature: hot\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.attributes.temperature",
    at: "hot",
    message: /must be number/,
  },
  {
    name: "LlmSettings with non-string stop words",
    yaml: `${head("LlmSettings")}  attributes:\n    stop_words: [1]\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.attributes.stop_words[0]",
    at: "1]",
    message: /must be string/,
  },
  {
    name: "LlmSettings with a fractional integer attribute",
    yaml: `${head("LlmSettings")}  attributes:\n    max_tokens: 0.5\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.attributes.max_tokens",
    at: "0.5",
    message: /must be integer, not number/,
  },
  {
    name: "LlmSettings with another type",
    yaml: `${head("LlmSettings")}  type: chat-settings\n  attributes: {}\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.type",
    at: "chat-settings",
    message: /must be `llm-settings`/,
  },
  {
    name: "LlmSettings with an unknown attribute",
    yaml: `${head("LlmSettings")}  attributes:\n    temprature: 1\n`,
    code: "SCHEMA_VIOLATION",
    path: "spec.attributes.temprature",
    at: "temprature",
    message: /did you mean `temperature`|unknown field/,
  },
  // envelope
  {
    name: "a bad resource name",
    yaml: `apiVersion: gatesync.dev/v1\nkind: OrgKey\nmetadata:\n  name: Bad_Name\nspec:\n  keyId: k\n`,
    code: "SCHEMA_VIOLATION",
    path: "metadata.name",
    at: "Bad_Name",
    message: /lowercase letters/,
  },
  {
    name: "a wrong apiVersion",
    yaml: `apiVersion: gatesync.dev/v2\nkind: OrgKey\nmetadata:\n  name: k\nspec:\n  keyId: k\n`,
    code: "SCHEMA_VIOLATION",
    path: "apiVersion",
    at: "gatesync.dev/v2",
    message: /must be "gatesync\.dev\/v1"/,
  },
  {
    name: "an unknown kind",
    yaml: `apiVersion: gatesync.dev/v1\nkind: OrgKy\nmetadata:\n  name: k\nspec: {}\n`,
    code: "UNKNOWN_KIND",
    at: "OrgKy",
    message: /unknown kind "OrgKy"/,
  },
  {
    name: "a secret reference with a bad name",
    yaml: `${head("OAuthClient")}  apiId: a\n  clientId: c\n  secret: \${env:not-a-name}\n`,
    code: "SECRET_SYNTAX",
    path: "spec.secret",
    at: "${env",
    message: /not an environment variable name/,
  },
];

describe("each kind", () => {
  it.each(Object.entries(valid))("accepts a valid %s", async (kind, yaml) => {
    const files: Record<string, string> = { "r.yaml": yaml };
    if (kind !== "ApiDefinition") files["api.yaml"] = petstore;
    const dir = await tempRepo(files);
    const result = await validator.validate({ root: dir });
    expect(result.diagnostics.filter((d) => d.severity === "error")).toEqual([]);
    expect(result.resources.map((r) => r.kind)).toContain(kind);
  });

  it.each(cases)("reports $name", async (c) => {
    const dir = await tempRepo({ "r.yaml": c.yaml });
    const result = await validator.validate({ root: dir, ...(c.appTypeProviders === undefined ? {} : { appTypeProviders: new Set(c.appTypeProviders) }) });
    const found = result.diagnostics.filter((d) => d.code === c.code);
    expect(found, JSON.stringify(result.diagnostics, null, 2)).toHaveLength(1);
    const d = found[0]!;
    expect(d.severity).toBe(c.severity ?? "error");
    expect(d.file).toBe("r.yaml");
    expect(d.message).toMatch(c.message);
    if (c.path !== undefined) expect(d.path).toBe(c.path);
    expect({ line: d.line, column: d.column }).toEqual(positionOf(c.yaml, c.at));
    if ((c.severity ?? "error") === "error") expect(result.resources.map((r) => `${r.kind}/${r.name}`)).not.toContain(d.resource ?? "-");
  });
});
