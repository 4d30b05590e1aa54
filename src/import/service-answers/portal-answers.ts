/**
 * The portal's answers: `GET /products` (Product-index), `GET /oauth-providers/{id}/client-types`
 * (a list of client types), `GET /webhooks` (Webhook-index, with Headers).
 */
import { apiProductKind } from "../../kinds/api-product.js";
import { clientTypeKind } from "../../kinds/client-type.js";
import { portalWebhookKind } from "../../kinds/portal-webhook.js";
import { resourceName } from "../api-document.js";
import type { ImportedResource, Origin, ReportEntry } from "../model.js";
import { isRecord } from "../model.js";
import { adoptAnnotation } from "../../plan/names/adopt-annotation.js";
import { pick } from "./answer-shapes.js";

export interface AnswerRead {
  readonly resources: ImportedResource[];
  readonly entries: ReportEntry[];
}

const productShapes = {
  Name: "string",
  DisplayName: "string",
  Description: "string",
  ProviderID: "integer",
  DCREnabled: "boolean",
  Feature: "boolean",
  Scopes: "string",
  Content: "string",
  CID: "string",
  Catalogues: "integers",
  Tags: "integers",
  Templates: "integers",
} as const;

function apiDetails(value: unknown, unmanaged: string[]): Record<string, unknown>[] | undefined {
  if (!Array.isArray(value)) return undefined;
  return value.flatMap((d, i) => {
    if (!isRecord(d) || typeof d.APIID !== "string") {
      unmanaged.push(`APIDetails[${i}]`);
      return [];
    }
    const { kept, unmanaged: rest } = pick(d, { APIID: "string", Description: "string", OASUrl: "string" });
    unmanaged.push(...rest.map((r) => `APIDetails[${i}].${r}`));
    if (kept.OASUrl === "") delete kept.OASUrl;
    return [kept];
  });
}

/**
 * A product's list answer (Product-index) carries no ProviderID, its read answer (`GET
 * /products/{id}`) does: for the list, the API provider the operator names (--product-provider)
 * or the portal's only one (providers.json) stands in; a product's own ProviderID wins.
 */
export function product(p: Record<string, unknown>, origin: Origin, providerId?: number): ImportedResource | string {
  if (!Number.isInteger(p.ID) || typeof p.Name !== "string") return "a product needs an integer ID and a Name";
  if (!Number.isInteger(p.ProviderID) && providerId === undefined) return "it carries no ProviderID and no API provider stands in for it";
  const { kept, unmanaged } = pick(p, productShapes, ["ID", "APIDetails", "IsDocumentationOnly"]);
  const details = apiDetails(p.APIDetails, unmanaged);
  if (p.IsDocumentationOnly === true) return "a documentation-only product: gatesync manages regular products";
  const spec = {
    ...(providerId === undefined ? {} : { ProviderID: providerId }),
    ...kept,
    ...(details === undefined || details.length === 0 ? {} : { APIDetails: details }),
  };
  const id = String(p.ID);
  return { kind: apiProductKind.kind, name: resourceName(p.Name), spec, annotations: { [adoptAnnotation]: id }, origin, sourceId: `product:${id}`, unmanaged };
}

const clientTypeShapes = {
  Name: "string",
  Description: "string",
  ResponseTypes: "string",
  GrantType: "string",
  TokenEndpointAuthMethod: "string",
  IdpAppType: "string",
} as const;

export function clientType(providerId: number, c: Record<string, unknown>, origin: Origin): ImportedResource | string {
  if (!Number.isInteger(c.ID) || typeof c.Name !== "string") return "a client type needs an integer ID and a Name";
  const { kept, unmanaged } = pick(c, clientTypeShapes, ["ID", "CreatedAt", "UpdatedAt"]);
  const id = c.ID as number;
  return {
    kind: clientTypeKind.kind,
    name: resourceName(`${c.Name}-${providerId}-${id}`),
    spec: { providerId, clientTypeId: id, ResponseTypes: "", GrantType: "", ...kept },
    origin,
    sourceId: `client-type:${providerId}/${id}`,
    unmanaged,
  };
}

export function portalWebhook(w: Record<string, unknown>, origin: Origin): ImportedResource | string {
  if ((typeof w.ID !== "string" && !Number.isInteger(w.ID)) || typeof w.Name !== "string") return "a webhook needs an ID and a Name";
  const { kept, unmanaged } = pick(w, { Name: "string", URL: "string", Method: "string", Timeout: "integer", Events: "strings" }, [
    "ID",
    "Headers",
    "CreatedAt",
    "UpdatedAt",
  ]);
  // the portal keeps the headers; gatesync's PortalWebhook does not send them: their names are listed, their values kept nowhere
  const headers = Array.isArray(w.Headers) ? w.Headers.flatMap((h) => (isRecord(h) && typeof h.Name === "string" ? [h.Name] : [])) : [];
  if (headers.length > 0) unmanaged.push(`Headers (${[...headers].sort().join(", ")}: values not kept)`);
  const id = String(w.ID);
  return {
    kind: portalWebhookKind.kind,
    name: resourceName(w.Name),
    spec: { Events: [], ...kept },
    annotations: { [adoptAnnotation]: id },
    origin,
    sourceId: `portal-webhook:${id}`,
    unmanaged,
  };
}
