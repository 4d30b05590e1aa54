/**
 * One file of a dump: an OAS API (`{ "oas": <document>, "categories", … }`) becomes an
 * ApiDefinition with the index's overrides applied; a classic API (`{ "api_definition": … }`) is
 * reported as needing the dashboard's migration first, never guessed.
 */
import { apiResource, documentApiId, extensionOf, extensionKey, neutralDocument, withInfo } from "../api-document.js";
import type { Origin, SourceRead } from "../model.js";
import { errorEntry, isRecord, skipEntry, unmanagedFields } from "../model.js";
import type { IndexedFile } from "./index-file.js";

const source = "sync-dump";

export const classicHint =
  'migrate it to OpenAPI first with the dashboard\'s migrate endpoint, trying it in its dryRun mode (`curl -X POST "$DASHBOARD_URL/api/apis/migrate" -H "Authorization: $DASHBOARD_TOKEN" -d \'{"mode":"dryRun","apiIDs":["<api id>"]}\'`), then dump again';

/** The document with the index's overrides: upstream, listen path and its strip. */
function withOverrides(document: Record<string, unknown>, o: IndexedFile["overrides"]): Record<string, unknown> {
  const ext = extensionOf(document);
  if (ext === undefined || (o.target === undefined && o.listenPath === undefined && o.strip === undefined)) return document;
  const server = isRecord(ext.server) ? ext.server : {};
  const listen = isRecord(server.listenPath) ? server.listenPath : {};
  const upstream = isRecord(ext.upstream) ? ext.upstream : {};
  const changed = {
    ...ext,
    ...(o.target === undefined ? {} : { upstream: { ...upstream, url: o.target } }),
    ...(o.listenPath === undefined && o.strip === undefined
      ? {}
      : {
          server: {
            ...server,
            listenPath: { ...listen, ...(o.listenPath === undefined ? {} : { value: o.listenPath }), ...(o.strip === undefined ? {} : { strip: o.strip }) },
          },
        }),
  };
  return { ...document, [extensionKey]: changed };
}

export function dumpFileRead(value: unknown, f: IndexedFile, origin: Origin): SourceRead {
  if (isRecord(value) && "api_definition" in value) {
    const id = isRecord(value.api_definition) && typeof value.api_definition.api_id === "string" ? value.api_definition.api_id : (f.apiId ?? "");
    return {
      resources: [],
      entries: [
        skipEntry(origin, source, `classic API definition${id === "" ? "" : ` ${JSON.stringify(id)}`}: gatesync manages OpenAPI APIs only`, classicHint),
      ],
    };
  }
  const document = isRecord(value) ? neutralDocument(value.oas) : undefined;
  if (!isRecord(value) || document === undefined) {
    return {
      resources: [],
      entries: [errorEntry(origin, source, 'not an API file of a dump: expected `{ "oas": <OpenAPI document> }` or a classic `{ "api_definition": … }`')],
    };
  }
  // index-level ids win over the file's
  const info = {
    ...(f.apiId === undefined ? {} : { id: f.apiId }),
    ...(f.dbId === undefined ? {} : { dbId: f.dbId }),
    ...(f.orgId === undefined ? {} : { orgId: f.orgId }),
  };
  const doc = withOverrides(withInfo(document, info), f.overrides);
  const apiId = f.apiId ?? documentApiId(doc) ?? /^oas-(.+)\.json$/.exec(f.file.split("/").pop() ?? "")?.[1];
  if (apiId === undefined)
    return { resources: [], entries: [errorEntry(origin, source, "the API's id is nowhere: not in the index, the extension's info.id or the file's name")] };
  const unmanaged = [...unmanagedFields(value, ["oas"]), ...(f.overrides.versionName === undefined ? [] : ["index oas.version_name"])];
  return { resources: [apiResource(doc, apiId, origin, unmanaged)], entries: [] };
}
