/** The smallest valid OpenAPI document of the petstore API (its gateway extension included), with the title and description a test needs. */
export const petstoreOpenapi = (info: { readonly title?: string; readonly description: string }): string => `openapi: 3.0.3
info:
  title: "${info.title ?? "Petstore"}"
  description: "${info.description}"
  version: "1"
servers: [{ url: "http://petstore.internal" }]
paths: {}
x-gw-api-gateway:
  info: { name: Petstore, state: { active: true } }
  upstream: { url: "http://petstore.internal" }
  server: { listenPath: { value: /petstore/ } }
`;
