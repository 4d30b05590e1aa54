/**
 * The operator's manifests: multi-document YAML of its OAS API resources (the vendor's
 * `TykOasApiDefinition`, `GwOasApiDefinition` in the contract's spelling), whose document sits
 * in a ConfigMap key (`spec.tykOAS.configmapRef: { name, namespace, keyName }`, `gwOAS` too),
 * with the ConfigMaps beside them. Classic definitions and security policies are reported.
 */
import { InputProblem, parseYamlDocuments, readSourceFile } from "../bounded-input.js";
import type { InputLimits } from "../bounded-input.js";
import { apiResource, documentApiId, neutralDocument } from "../api-document.js";
import type { Origin, ReportEntry, SourceRead } from "../model.js";
import { errorEntry, isRecord, skipEntry, unmanagedFields } from "../model.js";
import { classicHint } from "../sync-dump/dump-file.js";

const source = "operator";
const oasKinds = new Set(["TykOasApiDefinition", "GwOasApiDefinition"]);
/** The operator's classic API resource: the same word as gatesync's kind, another thing. */
const classicKind = ["Api", "Definition"].join("");
const storageKeys = ["tykOAS", "gwOAS"];

interface Manifest {
  readonly value: Record<string, unknown>;
  readonly origin: Origin;
}

const metaOf = (m: Record<string, unknown>): { name: string; namespace: string } => {
  const meta = isRecord(m.metadata) ? m.metadata : {};
  return { name: typeof meta.name === "string" ? meta.name : "", namespace: typeof meta.namespace === "string" ? meta.namespace : "default" };
};

function configMaps(manifests: readonly Manifest[]): Map<string, Record<string, unknown>> {
  const maps = new Map<string, Record<string, unknown>>();
  for (const m of manifests) {
    if (m.value.kind !== "ConfigMap") continue;
    const { name, namespace } = metaOf(m.value);
    maps.set(`${namespace}/${name}`, isRecord(m.value.data) ? m.value.data : {});
  }
  return maps;
}

function oasApi(m: Manifest, maps: Map<string, Record<string, unknown>>, limits: InputLimits): SourceRead {
  const spec = isRecord(m.value.spec) ? m.value.spec : {};
  const storage = storageKeys.map((k) => spec[k]).find(isRecord);
  const ref = isRecord(storage?.configmapRef) ? storage.configmapRef : undefined;
  const meta = metaOf(m.value);
  if (ref === undefined || typeof ref.name !== "string" || typeof ref.keyName !== "string") {
    return { resources: [], entries: [errorEntry(m.origin, source, `${meta.name}: spec.${storageKeys[0]!}.configmapRef needs name and keyName`)] };
  }
  const namespace = typeof ref.namespace === "string" && ref.namespace !== "" ? ref.namespace : meta.namespace;
  const data = maps.get(`${namespace}/${ref.name}`);
  if (data === undefined)
    return { resources: [], entries: [errorEntry(m.origin, source, `${meta.name}: ConfigMap ${namespace}/${ref.name} is not among the manifests`)] };
  const text = data[ref.keyName];
  if (typeof text !== "string") {
    return {
      resources: [],
      entries: [errorEntry(m.origin, source, `${meta.name}: ConfigMap ${namespace}/${ref.name} has no key ${JSON.stringify(ref.keyName)}`)],
    };
  }
  let document: Record<string, unknown> | undefined;
  try {
    document = neutralDocument(parseYamlDocuments(text, `${ref.name}/${ref.keyName}`, limits)[0]?.value);
  } catch (err) {
    if (!(err instanceof InputProblem)) throw err;
    return { resources: [], entries: [errorEntry(m.origin, source, `${meta.name}: ConfigMap key ${ref.keyName}: ${err.message}`)] };
  }
  if (document === undefined)
    return { resources: [], entries: [errorEntry(m.origin, source, `${meta.name}: ConfigMap key ${ref.keyName} holds no OpenAPI document`)] };
  const status = isRecord(m.value.status) ? m.value.status : {};
  const apiId = documentApiId(document) ?? (typeof status.id === "string" && status.id !== "" ? status.id : undefined);
  if (apiId === undefined) {
    return {
      resources: [],
      entries: [
        errorEntry(
          m.origin,
          source,
          `${meta.name}: the API's id is nowhere: not in the extension's info.id, nor in status.id`,
          "add the existing API's id to the document's extension (info.id)",
        ),
      ],
    };
  }
  return {
    resources: [
      apiResource(
        document,
        apiId,
        m.origin,
        unmanagedFields(spec, storageKeys).map((f) => `spec.${f}`),
      ),
    ],
    entries: [],
  };
}

function otherManifest(m: Manifest): ReportEntry | undefined {
  const kind = String(m.value.kind);
  const { name } = metaOf(m.value);
  if (kind === "ConfigMap") return undefined;
  if (kind === classicKind) return skipEntry(m.origin, source, `${name}: a classic API definition: gatesync manages OpenAPI APIs only`, classicHint);
  if (kind === "SecurityPolicy") return skipEntry(m.origin, source, `${name}: a security policy: outside gatesync's kinds`);
  return skipEntry(m.origin, source, `${name}: ${kind} is not one of the operator's API resources`);
}

/** Every document of the manifest files, the ConfigMaps looked up across all of them. */
export function readOperatorManifests(root: string, files: readonly string[], limits: InputLimits): SourceRead {
  const manifests: Manifest[] = [];
  const entries: ReportEntry[] = [];
  for (const file of files) {
    try {
      for (const d of readSourceFile(root, file, limits)) {
        if (isRecord(d.value)) manifests.push({ value: d.value, origin: { file, at: `document ${d.index + 1} (line ${d.line})` } });
        else entries.push(errorEntry({ file, at: `document ${d.index + 1}` }, source, "not a Kubernetes manifest (a mapping with kind)"));
      }
    } catch (err) {
      if (!(err instanceof InputProblem)) throw err;
      entries.push(errorEntry({ file }, source, err.message, err.hint));
    }
  }
  const maps = configMaps(manifests);
  const read: SourceRead = { resources: [], entries };
  for (const m of manifests) {
    if (oasKinds.has(String(m.value.kind))) {
      const one = oasApi(m, maps, limits);
      read.resources.push(...one.resources);
      read.entries.push(...one.entries);
    } else {
      const e = otherManifest(m);
      if (e !== undefined) read.entries.push(e);
    }
  }
  return read;
}
