/**
 * What `gatesync init` writes: a gatesync.yaml, one small example per kind, sandbox fixtures
 * holding the objects the interfaces cannot create (so the scaffold applies into
 * `gatesync sandbox --fixtures sandbox-fixtures.yaml` as generated), and the CI job.
 */

/** Resource file name (below config/) → its YAML after the modeline. */
export const resourceTemplates: Readonly<Record<string, string>> = {
  "api-definition.yaml": `# An API that exists on the gateway already (APIs cannot be created through the interfaces):
# gatesync keeps its OpenAPI definition and middleware flags in git.
apiVersion: gatesync.dev/v1
kind: ApiDefinition
metadata:
  name: petstore
spec:
  apiId: petstore-v1
  definition:
    openapi: 3.0.3
    info: { title: Petstore, version: 1.0.0 }
    paths:
      /pets:
        get:
          operationId: listPets
          responses:
            "200": { description: The pets }
  query:
    listenPath: /petstore/
    upstreamURL: http://petstore.internal:8080
`,
  "oauth-client.yaml": `# OAuth clients exist already; gatesync keeps their redirect URI, policy and metadata.
apiVersion: gatesync.dev/v1
kind: OAuthClient
metadata:
  name: petstore-mobile
spec:
  apiRef: petstore
  clientId: petstore-mobile-app
  description: Mobile storefront app
  redirect_uri: https://shop.example.com/oauth/callback
  policy_id: mobile-default
`,
  "org-key.yaml": `# An organisation key's id is the organisation's id: the gateway finds an organisation's
# limits under its own id, so a key under any other id limits nothing.
apiVersion: gatesync.dev/v1
kind: OrgKey
metadata:
  name: acme
spec:
  keyId: acme
  org_id: acme
  alias: ACME Corp
  rate: 1000
  per: 60
`,
  "client-type.yaml": `# Client types exist already on the portal's provider; gatesync keeps them as written.
apiVersion: gatesync.dev/v1
kind: ClientType
metadata:
  name: web-apps
spec:
  providerId: 1
  clientTypeId: 10
  Name: Web applications
  ResponseTypes: code
  GrantType: authorization_code,refresh_token
`,
  "api-product.yaml": `# Products are created once; the portal offers no update through these interfaces.
apiVersion: gatesync.dev/v1
kind: ApiProduct
metadata:
  name: storefront
spec:
  Name: storefront
  DisplayName: Storefront APIs
  ProviderID: 1
  APIDetails:
    - apiRef: petstore
`,
  "portal-webhook.yaml": `apiVersion: gatesync.dev/v1
kind: PortalWebhook
metadata:
  name: user-lifecycle
spec:
  Name: User lifecycle to audit log
  URL: https://audit.example.com/portal-events
  Method: POST
  Timeout: 5
  Events: [UserRegistered]
`,
  "dashboard-webhook.yaml": `apiVersion: gatesync.dev/v1
kind: DashboardWebhook
metadata:
  name: alerts-to-chat
spec:
  name: alerts-to-chat
  method: POST
  target_path: https://chat.example.com/hooks/gateway-alerts
`,
  "llm-settings.yaml": `apiVersion: gatesync.dev/v1
kind: LlmSettings
metadata:
  name: support-assistant
spec:
  attributes:
    model_name: support-large
    temperature: 0.2
`,
};

/** gatesync.yaml after its modeline: credentials only by variable name. */
export const configTemplate = `# Credentials are never written here, only the names of the environment variables holding them.
# The URLs point at \`gatesync sandbox\` (port 8080) to try it out: change them to your gateway.
apiVersion: gatesync.dev/v1
kind: GatesyncConfig
source:
  directory: ./config
targets:
  gateway:
    url: http://127.0.0.1:8080
    credentialEnv: GW_ADMIN_KEY
  portal:
    url: http://127.0.0.1:8080/portal/api
    credentialEnv: PORTAL_API_KEY
  dashboard:
    url: http://127.0.0.1:8080
    tokenEnv: DASHBOARD_TOKEN
  llm:
    url: http://127.0.0.1:8080/llm/api
    credentialEnv: LLM_API_KEY
state:
  backend: sqlite
  path: .gatesync/state.db
orphans: report
server:
  # the merge-request plan job reads the daemon's state (GET /state) with this token:
  # docs/user/merge-requests.md (set it on the daemon, and as GATESYNC_STATE_TOKEN in CI)
  stateTokenEnv: GATESYNC_STATE_TOKEN
  # gatesync promote / gatesync rollback send this token (POST /environments/NAME/promote):
  # docs/user/promotion.md (the sync and state tokens cannot promote)
  promoteTokenEnv: GATESYNC_PROMOTE_TOKEN
secrets:
  fileRoot: ./secrets
  # the only variables resources may read with \${env:NAME}
  env: []
# Governance rules (Spectral rulesets, see docs/user/rules.md): uncomment to check them at validate,
# plan and apply. An \`error\` finding stops the run; warn, info and hint are reported.
# rules:
#   openapi: rules/openapi.spectral.yaml
#   resources: rules/resources.spectral.yaml
`;

/** Example rulesets, written by init and off until gatesync.yaml names them. */
export const rulesetTemplates: Readonly<Record<string, string>> = {
  "openapi.spectral.yaml": `# Applied to every ApiDefinition's OpenAPI document (inline or definitionFile) when
# gatesync.yaml names it under rules.openapi. A standard Spectral ruleset:
# https://docs.stoplight.io/docs/spectral/ — extends, given (JSONPath), then (core functions),
# severity (error | warn | info | hint), message, overrides.
extends: [[spectral:oas, recommended]]
rules:
  # every API names a contact: who to ask when it breaks
  info-contact: error
  # every operation says what it does
  operation-summary:
    description: Every operation has a summary.
    given: "$.paths[*][get,put,post,delete,options,head,patch,trace]"
    severity: warn
    then: { field: summary, function: truthy }
`,
  "resources.spectral.yaml": `# Applied to every resource document (apiVersion, kind, metadata, spec) when gatesync.yaml
# names it under rules.resources.
rules:
  # listen paths start with the team's prefix
  listen-path-prefix:
    description: Listen paths start with the team's prefix.
    message: "listen path {{value}} must start with /pet"
    given: "$.spec.query.listenPath"
    severity: warn
    then: { function: pattern, functionOptions: { match: "^/pet" } }
  # every resource says which team owns it
  team-label:
    description: Every resource has a team label.
    given: "$.metadata"
    severity: warn
    then: { field: labels.team, function: truthy }
`,
};

/** Objects the interfaces cannot create, for \`gatesync sandbox --fixtures sandbox-fixtures.yaml\`. */
export const fixturesTemplate = `# What \`gatesync sandbox --fixtures sandbox-fixtures.yaml\` holds before the first apply:
# the objects the management interfaces cannot create, as the examples in config/ expect them.
apis:
  - { id: petstore-v1, name: Petstore, listenPath: /petstore/, upstream: http://petstore.internal:8080 }
policies: [mobile-default]
oauthClients:
  - { apiId: petstore-v1, clientId: petstore-mobile-app, policy_id: mobile-default }
providers:
  - id: 1
    name: Corporate Keycloak
    type: Keycloak
    clientTypes:
      - { ID: 10, Name: Web applications, ResponseTypes: code, GrantType: authorization_code }
`;
