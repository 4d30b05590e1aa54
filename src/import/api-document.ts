/**
 * An OpenAPI document with the gateway extension, as the vendor's tools write it, turned into an
 * ApiDefinition: the extension under the contract's key (`x-gw-api-gateway`; the vendor's own
 * spelling is read too), the API's id from the extension's `info.id` unless the caller's wins.
 */
import { apiDefinitionKind } from "../kinds/api-definition.js";
import type { ImportedResource, Origin } from "./model.js";
import { isRecord } from "./model.js";

export const extensionKey = "x-gw-api-gateway";
/** The extension key as the vendor's own tools spell it (the contract's neutral `gw` replaces the vendor's name). */
export const vendorExtensionKey = "x-tyk-api-gateway";

/** The document with the extension under the contract's key; undefined when it is no OpenAPI document. */
export function neutralDocument(document: unknown): Record<string, unknown> | undefined {
  if (!isRecord(document) || (typeof document.openapi !== "string" && typeof document.swagger !== "string")) return undefined;
  if (!(vendorExtensionKey in document)) return document;
  const out: Record<string, unknown> = {};
  for (const [k, v] of Object.entries(document)) {
    if (k === vendorExtensionKey) {
      if (!(extensionKey in document)) out[extensionKey] = v;
    } else out[k] = v;
  }
  return out;
}

export function extensionOf(document: Record<string, unknown>): Record<string, unknown> | undefined {
  const ext = document[extensionKey];
  return isRecord(ext) ? ext : undefined;
}

/** The document with the extension's `info` members set (ids the caller knows better). */
export function withInfo(document: Record<string, unknown>, info: Record<string, unknown>): Record<string, unknown> {
  const ext = extensionOf(document);
  if (ext === undefined || Object.keys(info).length === 0) return document;
  const current = isRecord(ext.info) ? ext.info : {};
  return { ...document, [extensionKey]: { ...ext, info: { ...current, ...info } } };
}

/** A name for metadata.name from free text: lower-case words joined by `-`, at most 63 characters. */
export function resourceName(text: string, fallback = "imported"): string {
  const slug = text
    .toLowerCase()
    .replace(/[^a-z0-9]+/g, "-")
    .replace(/^-+|-+$/g, "")
    .slice(0, 63)
    .replace(/-+$/, "");
  return slug === "" ? fallback : slug;
}

/** The ApiDefinition of a document whose API id is known; the document is written beside it. */
export function apiResource(document: Record<string, unknown>, apiId: string, origin: Origin, unmanaged: readonly string[] = []): ImportedResource {
  const ext = extensionOf(document);
  const info = isRecord(ext?.info) ? ext.info : {};
  const title = isRecord(document.info) && typeof document.info.title === "string" ? document.info.title : "";
  const label = typeof info.name === "string" && info.name !== "" ? info.name : title;
  return {
    kind: apiDefinitionKind.kind,
    name: resourceName(label === "" ? apiId : label, resourceName(apiId)),
    spec: { apiId },
    document: withInfo(document, ext === undefined ? {} : { id: apiId }),
    origin,
    sourceId: `api:${apiId}`,
    unmanaged,
  };
}

/** The API id a document carries in its extension. */
export function documentApiId(document: Record<string, unknown>): string | undefined {
  const info = extensionOf(document)?.info;
  return isRecord(info) && typeof info.id === "string" && info.id !== "" ? info.id : undefined;
}
