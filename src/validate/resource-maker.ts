/**
 * The resource a checked document makes: its fields from the document as written, its labels and
 * annotations shared between the resources that carry the same ones, and its spec as its
 * verdict holds it (text from a compact check, parsed on each read).
 */
import { HeldValue, JsonText } from "../deferred.js";
import type { Spec } from "../kinds/kind.js";
import type { Resource, ResourceSource } from "../kinds/resource.js";
import type { DocumentVerdict, FileVerdict } from "./check-file.js";
import type { WrittenResource } from "./cross-checks.js";

const noEntries: Readonly<Record<string, string>> = Object.freeze({});

/**
 * Labels or annotations, one object per distinct set (frozen, shared by the resources that
 * carry it: a repository has few — `team: payments` on thousands of resources); none (absent
 * or empty) are one shared empty object.
 */
function shared(entries: unknown, seen: Map<string, Readonly<Record<string, string>>>): Readonly<Record<string, string>> {
  if (entries === undefined || entries === null || Object.keys(entries).length === 0) return noEntries;
  const key = JSON.stringify(entries);
  let one = seen.get(key);
  if (one === undefined) {
    one = Object.freeze({ ...(entries as Record<string, string>) });
    seen.set(key, one);
  }
  return one;
}

/** A document as written, valid or not: its spec an object (`{}` when it is not one), read from its text on each use when it came as text. */
export function writtenResource(file: FileVerdict, doc: DocumentVerdict): WrittenResource {
  const base = { kind: doc.kind!, name: doc.name!, source: { file: file.path, index: doc.index, line: doc.line } };
  if (doc.text !== undefined) return { ...base, spec: new JsonText<Spec>(doc.text.spec) };
  const spec = (doc.value as { spec?: unknown }).spec;
  return { ...base, spec: new HeldValue((spec !== null && typeof spec === "object" && !Array.isArray(spec) ? spec : {}) as Spec) };
}

/** A resource document as parsed; from a compact check, its head alone (the spec is its own text). */
export function documentValue(doc: DocumentVerdict): Record<string, unknown> {
  return (doc.text === undefined ? doc.value : JSON.parse(doc.text.head)) as Record<string, unknown>;
}

/** Makes the resources of one validation: the few API versions and label sets there are, one object each. */
export class ResourceMaker {
  private readonly apiVersions = new Map<string, string>();
  private readonly entrySets = new Map<string, Readonly<Record<string, string>>>();

  /** The resource of a document that passed: its spec with its attached document when it has one. */
  resource(
    file: FileVerdict,
    doc: DocumentVerdict,
    value: Record<string, unknown>,
    attached: { readonly spec: Spec; readonly source: ResourceSource | undefined } | undefined,
  ): Resource {
    const meta = value.metadata as Record<string, unknown> | undefined;
    const apiVersion = String(value.apiVersion);
    const fields = {
      // one string for the few versions there are, not a copy per resource
      apiVersion: this.apiVersions.get(apiVersion) ?? (this.apiVersions.set(apiVersion, apiVersion), apiVersion),
      kind: doc.kind!,
      name: doc.name!,
      labels: shared(meta?.labels, this.entrySets),
      annotations: shared(meta?.annotations, this.entrySets),
      source: { file: file.path, index: doc.index, line: doc.line },
      ...(attached?.source === undefined ? {} : { definitionSource: attached.source }),
    };
    // a compact check's spec stays the text it came as: parsed on each read
    if (doc.text !== undefined) return { ...fields, spec: new JsonText<Spec>(doc.text.spec) };
    return { ...fields, spec: new HeldValue(attached?.spec ?? ((value.spec ?? {}) as Spec)) };
  }
}
