/**
 * A dashboard's OAS export (JSON or YAML): the OpenAPI document with the gateway extension, as
 * the dashboard's "export" (or `GET /api/apis/oas/{id}/export`) gives it; the id in the
 * extension's info.id.
 */
import { InputProblem, readSourceFile } from "../bounded-input.js";
import type { InputLimits } from "../bounded-input.js";
import { apiResource, documentApiId, neutralDocument } from "../api-document.js";
import type { SourceRead } from "../model.js";
import { errorEntry } from "../model.js";

const source = "dashboard-export";

export function readDashboardExport(root: string, file: string, limits: InputLimits): SourceRead {
  const origin = { file };
  try {
    const docs = readSourceFile(root, file, limits);
    const document = neutralDocument(docs[0]?.value);
    if (document === undefined) return { resources: [], entries: [errorEntry(origin, source, "not an OpenAPI document (no `openapi` member)")] };
    const apiId = documentApiId(document);
    if (apiId === undefined) {
      return {
        resources: [],
        entries: [
          errorEntry(
            origin,
            source,
            "the export has no x-gw-api-gateway.info.id: the API it came from is not known",
            "export it again from the dashboard, with its extension",
          ),
        ],
      };
    }
    return { resources: [apiResource(document, apiId, origin)], entries: [] };
  } catch (err) {
    if (!(err instanceof InputProblem)) throw err;
    return { resources: [], entries: [errorEntry(origin, source, err.message, err.hint)] };
  }
}
