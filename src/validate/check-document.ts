/**
 * The checks of one document that need nothing but the document: a resource's schema and its
 * kind's rules, an attached document's schema and format. They run where the file was parsed
 * (a worker thread, or the main one); what needs the whole repository runs later.
 */
import { ErrorCode } from "../errors.js";
import type { Diagnostic } from "../errors.js";
import type { AttachedDocument, KindModule, RuleContext, Spec } from "../kinds/kind.js";
import type { PathSegment } from "../field-path.js";
import type { SecretRef } from "../load/secret-refs.js";
import { findSecretRefs, walkStrings } from "../load/secret-refs.js";
import { errorCount, issueDiagnostics, ruleDiagnostics } from "./findings.js";
import type { Locate, Place } from "./findings.js";
import type { OpenApiChecker } from "./openapi.js";
import type { SchemaRegistry } from "./schema-registry.js";

/** Compiled checkers: one set per thread. */
export interface Checkers {
  readonly schemas: SchemaRegistry;
  readonly openapi: OpenApiChecker;
}

export interface SecretRefAt {
  /** From the document's root. */
  readonly path: readonly PathSegment[];
  readonly ref: SecretRef;
}

/** What checking an attached document found (diagnostics without a resource: the caller adds it). */
export interface AttachmentVerdict {
  readonly findings: readonly Diagnostic[];
  readonly errors: number;
}

export interface ResourceVerdict {
  readonly findings: readonly Diagnostic[];
  /** The schema passed and the resource has a name: its rules ran. */
  readonly passed: boolean;
  readonly ruleErrors: number;
  readonly secretRefs: readonly SecretRefAt[];
  /** The checks of an inline attached document. */
  readonly attachment?: AttachmentVerdict;
}

/** The secret references in a value, with their paths from the document's root. */
export function secretRefsIn(value: unknown, base: readonly PathSegment[]): SecretRefAt[] {
  const found: SecretRefAt[] = [];
  walkStrings(value, (s, p) => {
    for (const ref of findSecretRefs(s)) found.push({ path: [...base, ...p], ref });
  });
  return found;
}

/** Schema, then format: a document a resource carries. */
export async function checkAttachment(attached: AttachedDocument, document: unknown, place: Place, checkers: Checkers, locate: Locate): Promise<AttachmentVerdict> {
  const schema = checkers.schemas.validate(attached.schema, document);
  if (schema.length > 0) {
    return { findings: issueDiagnostics(schema, place, locate), errors: schema.length };
  }
  const format = await checkers.openapi.check(document);
  const findings = [
    ...issueDiagnostics(format.errors, place, locate, { code: ErrorCode.OPENAPI_INVALID, prefix: "the document breaks the OpenAPI schema" }),
    ...issueDiagnostics(format.gateway, place, locate, { code: ErrorCode.OPENAPI_INVALID, prefix: "the gateway refuses the document" }),
    ...issueDiagnostics(format.warnings, place, locate, { code: ErrorCode.OPENAPI_UNCHECKED_REF, severity: "warning" }),
  ];
  return { findings, errors: format.errors.length + format.gateway.length };
}

/** Schema and rules of a resource; with an inline attached document, its checks too. */
export async function checkResourceDocument(
  kind: KindModule,
  value: Record<string, unknown>,
  name: string | undefined,
  place: Place,
  ctx: RuleContext,
  checkers: Checkers,
  locate: Locate,
): Promise<ResourceVerdict> {
  const schemaIssues = checkers.schemas.validate(kind.schemaFile, value);
  const findings = issueDiagnostics(schemaIssues, place, locate);
  if (schemaIssues.length > 0 || name === undefined) return { findings, passed: false, ruleErrors: 0, secretRefs: [] };
  const spec = (value.spec ?? {}) as Spec;
  const rules = ruleDiagnostics(kind.check(spec, ctx), place, locate);
  const verdict = { findings: [...findings, ...rules], passed: true, ruleErrors: errorCount(rules), secretRefs: secretRefsIn(spec, ["spec"]) };
  const attached = kind.attached;
  if (attached === undefined || attached.file(spec) !== undefined) return verdict;
  const inline = valueAt(value, attached.inlineField);
  return { ...verdict, attachment: await checkAttachment(attached, inline, { ...place, base: attached.inlineField }, checkers, locate) };
}

export function valueAt(value: unknown, path: readonly PathSegment[]): unknown {
  let node = value;
  for (const seg of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[String(seg)];
  }
  return node;
}
