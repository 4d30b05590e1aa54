/**
 * The resource documents the tests write into their repositories, built one way: `doc` lays out
 * any kind, and a builder per kind the tests build often fills in its usual fields. Each returns
 * the file's YAML text, written as a user writes it (block style, two-space indent), so a test
 * that reads lines or positions from it still finds them where the text puts them.
 * `spec` options are further spec lines, written unindented as in the file's `spec:`; they come
 * after the named fields.
 */

/** A document of `kind` named `name`, with `spec` (unindented lines) under its `spec:`. */
export const doc = (kind: string, name: string, spec: string): string =>
  `apiVersion: gatesync.dev/v1\nkind: ${kind}\nmetadata:\n  name: ${name}\nspec:\n${spec.replace(/^/gm, "  ")}\n`;

/** The spec's lines: the named fields given, in order, then `spec` (an empty `spec` still adds its line). */
const specLines = (fields: readonly (readonly [string, string | number | undefined])[], spec: string | undefined): string =>
  [...fields.flatMap(([key, value]) => (value === undefined ? [] : [`${key}: ${value}`])), ...(spec === undefined ? [] : [spec])].join("\n");

export interface OrgKeyOptions {
  readonly name: string;
  /** The key's id on the gateway; the resource's name when left out. */
  readonly keyId?: string;
  readonly rate?: number | string;
  readonly per?: number | string;
  readonly spec?: string;
}

/** An OrgKey: `keyId`, then `rate` and `per` when given, then `spec`. */
export const orgKey = ({ name, keyId = name, rate, per, spec }: OrgKeyOptions): string =>
  doc(
    "OrgKey",
    name,
    specLines(
      [
        ["keyId", keyId],
        ["rate", rate],
        ["per", per],
      ],
      spec,
    ),
  );

/** `count` OrgKeys, one file each (`k<i>.yaml`, named `k<i>`, id `key-<i>`, rate `i`). */
export const numberedOrgKeys = (count: number): Record<string, string> =>
  Object.fromEntries(Array.from({ length: count }, (_, i) => [`k${i}.yaml`, orgKey({ name: `k${i}`, keyId: `key-${i}`, rate: i })]));

export interface ProductOptions {
  readonly name: string;
  /** The product's `Name` on the portal; the resource's name when left out. */
  readonly title?: string;
  readonly providerId?: number;
  readonly spec?: string;
}

/** An ApiProduct: `Name` and `ProviderID` (1 unless told), then `spec`. */
export const product = ({ name, title = name, providerId = 1, spec }: ProductOptions): string =>
  doc(
    "ApiProduct",
    name,
    specLines(
      [
        ["Name", title],
        ["ProviderID", providerId],
      ],
      spec,
    ),
  );

/** An OpenAPI document written inline under `definition:`, with no paths: what an API needs to be created and deactivated. */
export interface InlineOpenApi {
  readonly title: string;
  /** The upstream, the document's one server. */
  readonly server: string;
  /** `3.0.3` unless told. */
  readonly openapi?: string;
}

export interface ApiDefinitionOptions {
  readonly name: string;
  /** The API's id on the gateway; `<name>-id` when left out. */
  readonly apiId?: string;
  /** Written as `query: { listenPath: … }`, after `apiId`. */
  readonly listenPath?: string;
  readonly definition?: InlineOpenApi;
  readonly spec?: string;
}

const inlineDefinition = ({ title, server, openapi = "3.0.3" }: InlineOpenApi): string =>
  `definition:\n  openapi: ${openapi}\n  info: { title: ${title}, version: "1" }\n  servers: [{ url: "${server}" }]\n  paths: {}`;

/** An ApiDefinition: `apiId`, its listen path and inline definition when given, then `spec` (a definitionFile, verify …). */
export function apiDefinition({ name, apiId = `${name}-id`, listenPath, definition, spec }: ApiDefinitionOptions): string {
  const rest = [...(definition === undefined ? [] : [inlineDefinition(definition)]), ...(spec === undefined ? [] : [spec])];
  const query = listenPath === undefined ? undefined : `{ listenPath: ${listenPath} }`;
  return doc(
    "ApiDefinition",
    name,
    specLines(
      [
        ["apiId", apiId],
        ["query", query],
      ],
      rest.length === 0 ? undefined : rest.join("\n"),
    ),
  );
}
