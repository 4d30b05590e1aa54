/**
 * A resource's attached document (ApiDefinition's OpenAPI body), inline or from the file it
 * names: its checks reported for that resource, then the rules between document and spec.
 */
import { ErrorCode } from "../../errors.js";
import type { Diagnostic } from "../../errors.js";
import { DocumentRef } from "../../kinds/document-ref.js";
import type { DocumentSummary } from "../../kinds/document-ref.js";
import type { AttachedDocument, Spec } from "../../kinds/kind.js";
import type { ResourceSource } from "../../kinds/resource.js";
import { referenceKey } from "../../load/attached-files.js";
import { readDocumentSync } from "../../load/read-file.js";
import { formatPath } from "../../text/field-path.js";
import { checkAttachment, secretRefsIn, valueAt } from "../document/check-document.js";
import type { AttachmentVerdict, Checkers, SecretRefAt } from "../document/check-document.js";
import type { DocumentVerdict, FileVerdict } from "./check-file.js";
import { rulesetsFor } from "./check-file.js";
import type { RulesetsCode } from "../../rules/rule-runner.js";
import { errorAt, errorCount, ruleDiagnostics } from "../findings.js";
import type { Locate } from "../findings.js";

export interface AttachmentContext {
  readonly records: ReadonlyMap<string, FileVerdict>;
  /** `resourceFile\0name` → path of the named file. */
  readonly targets: ReadonlyMap<string, string>;
  readonly checkers: () => Promise<Checkers>;
  readonly locate: Locate;
  readonly report: (diagnostics: readonly Diagnostic[]) => void;
  readonly checkSecrets: (refs: readonly SecretRefAt[], place: { file: string; index: number; resource: string | undefined }) => number;
  /** Files whose document's findings are reported already: a document shared by several resources is reported once. */
  readonly reportedFiles: Set<string>;
  /** The governance rulesets, for a document checked here (one that did not look like an attachment). */
  readonly rules?: RulesetsCode;
}

export interface Attached {
  readonly document: unknown;
  /** Where the document was read from, when it is a file of its own. */
  readonly source?: ResourceSource;
}

/** One reference per checked document: the same object while the file's verdict is kept (the daemon's memos key on it). */
const references = new WeakMap<DocumentVerdict, DocumentRef>();

function documentRef(file: FileVerdict, doc: DocumentVerdict, summary: DocumentSummary): DocumentRef {
  let ref = references.get(doc);
  if (ref === undefined) {
    // the reference keeps where to read the document, not the file's verdict
    const { absolute, path } = file;
    const { index } = doc;
    ref = new DocumentRef(
      { file: path, read: () => readDocumentSync(absolute, path, index), readIfUnchanged: (text) => readDocumentSync(absolute, path, index, text) },
      summary,
    );
    references.set(doc, ref);
  }
  return ref;
}

/** An attached document found (inline, or in the file the spec names), with its verdict and where it is. */
interface FoundDocument {
  readonly document: unknown;
  readonly where: { readonly file: string; readonly index: number; readonly base: readonly (string | number)[] };
  readonly verdict: AttachmentVerdict;
  readonly refs: readonly SecretRefAt[];
  /** Set for a document in a file of its own. */
  readonly source?: ResourceSource;
}

type Owner = { readonly file: FileVerdict; readonly doc: DocumentVerdict; readonly spec: Spec; readonly resource: string | undefined };

/** The attached document, or undefined when it has errors (reported) or its file is unusable. */
export async function attachDocument(attached: AttachedDocument, owner: Owner, ctx: AttachmentContext): Promise<Attached | undefined> {
  const { spec, resource } = owner;
  const name = attached.file(spec);
  const found = name === undefined ? inlineDocument(attached, owner) : await documentInFile(attached, name, owner, ctx);
  if (found === undefined) return undefined;
  const { document, where, verdict } = found;
  // a shared file's findings go under the first resource naming it (they count for each)
  const shared = found.source !== undefined && ctx.reportedFiles.has(where.file);
  if (found.source !== undefined) ctx.reportedFiles.add(where.file);
  if (!shared) ctx.report(verdict.findings.map((d) => (resource === undefined || d.resource !== undefined ? d : { ...d, resource })));
  let errors = verdict.errors;
  const rules = ruleDiagnostics(attached.check(document, spec), { ...where, resource }, ctx.locate);
  ctx.report(rules);
  errors += errorCount(rules);
  if (found.source !== undefined) errors += ctx.checkSecrets(found.refs, { file: where.file, index: where.index, resource });
  if (errors > 0) return undefined;
  return { document, ...(found.source === undefined ? {} : { source: found.source }) };
}

/** The document written in the spec itself (its `inlineField`), as its file's check found it. */
function inlineDocument(attached: AttachedDocument, { file, doc }: Owner): FoundDocument | undefined {
  if (doc.attachment === undefined) return undefined;
  return {
    document: valueAt(doc.value, attached.inlineField),
    where: { file: file.path, index: doc.index, base: attached.inlineField },
    verdict: doc.attachment,
    refs: [],
  };
}

/** The one document of the file an attachment names, checked; undefined when the file holds none or several (reported). */
async function documentInFile(attached: AttachedDocument, name: string, owner: Owner, ctx: AttachmentContext): Promise<FoundDocument | undefined> {
  const { file, doc, resource } = owner;
  const rel = ctx.targets.get(referenceKey(file.path, name));
  const record = rel === undefined ? undefined : ctx.records.get(rel);
  if (rel === undefined || record === undefined) return undefined; // already reported
  if (record.documents.length !== 1) {
    const at = { file: file.path, resource, path: formatPath(attached.fileField), ...ctx.locate(file.path, doc.index, attached.fileField) };
    const field = formatPath(attached.fileField.slice(1));
    if (record.documents.length === 0 && !record.diagnostics.some((d) => d.severity === "error")) {
      ctx.report([errorAt(ErrorCode.DEFINITION_FILE, at, `${field} \`${name}\` holds no document`, "put one OpenAPI document in it")]);
    } else if (record.documents.length > 1) {
      ctx.report([
        errorAt(ErrorCode.DEFINITION_FILE, at, `${field} \`${name}\` holds ${record.documents.length} documents`, "put exactly one OpenAPI document in it"),
      ]);
    }
    return undefined;
  }
  const first = record.documents[0]!;
  const where = { file: rel, index: first.index, base: [] };
  // a document that did not look like one (or looked like a resource) is checked now
  const checked = first.kind === undefined ? first.attachment : undefined;
  const verdict = checked ?? (await checkAttachment(attached, first.value, where, await ctx.checkers(), ctx.locate, rulesetsFor(ctx.rules, record, undefined)));
  const refs = checked === undefined ? secretRefsIn(first.value, []) : first.secretRefs;
  return {
    document: first.summary === undefined ? first.value : documentRef(record, first, first.summary),
    where,
    verdict,
    refs,
    source: { file: rel, index: first.index, line: first.line },
  };
}
