/**
 * The text of what import writes: one folder per kind below `config/` (the layout `gatesync
 * init` starts, a file per resource), an ApiDefinition's document beside it as JSON, and — in a
 * new repository — gatesync.yaml naming the variables the resources read.
 */
import { dump } from "../../yaml/js-yaml-library.js";
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

/** The resource document a resource file holds (what its text is made from, and what import validates). */
export function resourceDocument(r: ImportedResource): Record<string, unknown> {
  const metadata = { name: r.name, ...(r.annotations === undefined ? {} : { annotations: r.annotations }) };
  const spec = r.document === undefined ? r.spec : { ...r.spec, definitionFile: documentName(r.name) };
  return { apiVersion: "gatesync.dev/v1", kind: r.kind, metadata, spec };
}

/** The line of the resource document in its file (below the one comment line). */
export const resourceDocumentLine = 2;

/**
 * A resource file: one comment line naming the source, then the document — a plain dump (no
 * document model: nothing to keep but the members in their order; ~0.67 s of 10,000 resources).
 */
export function resourceText(r: ImportedResource, doc: Record<string, unknown> = resourceDocument(r)): string {
  const from = JSON.stringify(r.origin.at === undefined ? r.origin.file : `${r.origin.file} ${r.origin.at}`);
  return `# imported by gatesync import from ${from}\n${dump(doc, { lineWidth: -1, noRefs: true })}`;
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
