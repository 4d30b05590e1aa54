/**
 * The text of what import writes: one folder per kind below `config/` (the layout `gatesync
 * init` starts, a file per resource), an ApiDefinition's document beside it as JSON, and — in a
 * new repository — gatesync.yaml naming the variables the resources read.
 */
import { yaml } from "../../load/yaml-reader.js";
import type { KindName } from "../../kinds/kind.js";
import { configTemplate } from "../../init/templates.js";
import type { ImportedResource } from "../model.js";

export const kindFolders: Readonly<Record<KindName, string>> = {
  ApiDefinition: "api-definitions",
  OAuthClient: "oauth-clients",
  OrgKey: "org-keys",
  ClientType: "client-types",
  ApiProduct: "api-products",
  PortalWebhook: "portal-webhooks",
  DashboardWebhook: "dashboard-webhooks",
  LlmSettings: "llm-settings",
};

/** Where a resource is written, relative to the repository. */
export const resourcePath = (r: { kind: KindName; name: string }): string => `config/${kindFolders[r.kind]}/${r.name}.yaml`;
export const documentName = (name: string): string => `${name}.openapi.json`;

export function resourceText(r: ImportedResource): string {
  const metadata = { name: r.name, ...(r.annotations === undefined ? {} : { annotations: r.annotations }) };
  const spec = r.document === undefined ? r.spec : { ...r.spec, definitionFile: documentName(r.name) };
  const doc = { apiVersion: "gatesync.dev/v1", kind: r.kind, metadata, spec };
  const from = JSON.stringify(r.origin.at === undefined ? r.origin.file : `${r.origin.file} ${r.origin.at}`);
  return `# imported by gatesync import from ${from}\n${yaml().stringify(doc, { lineWidth: 0 })}`;
}

export const documentText = (document: unknown): string => `${JSON.stringify(document, null, 2)}\n`;

/** gatesync.yaml of a new repository: init's, with the variables the imported resources read in its scope. */
export function configText(envNames: readonly string[]): string {
  const env =
    envNames.length === 0
      ? "[]"
      : `\n${[...envNames]
          .sort()
          .map((n) => `    - ${n}`)
          .join("\n")}`;
  return configTemplate.replace("  env: []", `  env: ${env}`);
}
