/**
 * The checks of one document that need nothing but the document: a resource's schema and its
 * kind's rules, an attached document's schema and format. They run where the file was parsed
 * (a worker thread, or the main one); what needs the whole repository runs later.
 */
import { ErrorCode } from "../../errors.js";
import type { Diagnostic } from "../../errors.js";
import type { AttachedDocument, KindModule, RuleContext, Spec } from "../../kinds/kind.js";
import type { PathSegment } from "../../text/field-path.js";
import type { SecretRef } from "../../secrets/references.js";
import { findSecretRefs, walkStrings } from "../../secrets/references.js";
import { errorCount, issueDiagnostics, ruleDiagnostics } from "../findings.js";
import { unknownReferenceFindings } from "./reference-check.js";
import type { Locate, Place } from "../findings.js";
import type { OpenApiChecker } from "./openapi.js";
import type { RulesetCheck } from "../../rules/rule-thread.js";
import type { FileFindings } from "../../rules/findings-cache.js";
import type { SchemaRegistry } from "../schema/schema-registry.js";

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

/** The governance rulesets (docs/user/rules.md) that apply to one file's documents, on this thread. */
export interface DocumentRulesets {
  readonly openapi?: RulesetCheck;
  readonly resources?: RulesetCheck;
  /** The file's absolute path: rulesets' `overrides` match it. */
  readonly absolute: string;
  /** Of the file's content: a document's findings are kept under it while it is unchanged. */
  readonly contentKey?: string;
  /** The file's entry in the findings cache kept across processes (rules/findings-cache.ts). */
  readonly memo?: FileFindings;
}

/** Schema, then format, then the OpenAPI ruleset (when the document passed both): a document a resource carries. */
export async function checkAttachment(
  attached: AttachedDocument,
  document: unknown,
  place: Place,
  checkers: Checkers,
  locate: Locate,
  rulesets?: DocumentRulesets,
): Promise<AttachmentVerdict> {
  const verdict = await checkAttachedDocument(attached, document, place, checkers, locate, rulesets);
  const unknown = unknownReferenceFindings(document, [], place, locate);
  return unknown.length === 0 ? verdict : { findings: [...verdict.findings, ...unknown], errors: verdict.errors + unknown.length };
}

async function checkAttachedDocument(
  attached: AttachedDocument,
  document: unknown,
  place: Place,
  checkers: Checkers,
  locate: Locate,
  rulesets?: DocumentRulesets,
): Promise<AttachmentVerdict> {
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
  const refused = format.errors.length + format.gateway.length;
  if (refused > 0 || rulesets?.openapi === undefined) return { findings, errors: refused };
  const ruled = await rulesets.openapi.check(document, place, rulesets.absolute, locate, rulesets.contentKey, rulesets.memo);
  return { findings: [...findings, ...ruled], errors: errorCount(ruled) };
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
  rulesets?: DocumentRulesets,
): Promise<ResourceVerdict> {
  const schemaIssues = checkers.schemas.validate(kind.schemaFile, value);
  // an inline attached document's references are its checks' (checkAttachment)
  const unknown = unknownReferenceFindings(withoutInline(kind, value.spec), ["spec"], place, locate);
  const findings = [...issueDiagnostics(schemaIssues, place, locate), ...unknown];
  if (schemaIssues.length > 0 || name === undefined) return { findings, passed: false, ruleErrors: 0, secretRefs: [] };
  const spec = (value.spec ?? {}) as Spec;
  const rules = [...unknown, ...ruleDiagnostics(kind.check(spec, ctx), place, locate)];
  // the whole envelope (apiVersion, kind, metadata, spec), as written
  const governed =
    rulesets?.resources === undefined ? [] : await rulesets.resources.check(value, place, rulesets.absolute, locate, rulesets.contentKey, rulesets.memo);
  const verdict = {
    findings: [...rules, ...governed],
    passed: true,
    ruleErrors: errorCount(rules) + errorCount(governed),
    secretRefs: secretRefsIn(spec, ["spec"]),
  };
  const attached = kind.attached;
  if (attached === undefined || attached.file(spec) !== undefined) return verdict;
  const inline = valueAt(value, attached.inlineField);
  return { ...verdict, attachment: await checkAttachment(attached, inline, { ...place, base: attached.inlineField }, checkers, locate, rulesets) };
}

/** A spec without its kind's inline attached document (`spec.definition`). */
function withoutInline(kind: KindModule, spec: unknown): unknown {
  const field = kind.attached?.inlineField;
  if (field?.length !== 2 || spec === null || typeof spec !== "object" || !Object.hasOwn(spec, field[1]!)) return spec;
  const { [String(field[1])]: _inline, ...rest } = spec as Record<string, unknown>;
  return rest;
}

export function valueAt(value: unknown, path: readonly PathSegment[]): unknown {
  let node = value;
  for (const seg of path) {
    if (node === null || typeof node !== "object") return undefined;
    node = (node as Record<string, unknown>)[String(seg)];
  }
  return node;
}
