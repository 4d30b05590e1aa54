/**
 * Turning problems into located diagnostics: schema issues and rule findings relative to a
 * document, positions looked up only for what is reported.
 */
import { ErrorCode } from "../errors.js";
import type { Diagnostic, Severity } from "../errors.js";
import type { RuleFinding } from "../kinds/kind.js";
import type { PathSegment } from "../text/field-path.js";
import { formatPath } from "../text/field-path.js";
import { Locator } from "../load/yaml-locator.js";
import type { SyntaxTrees } from "../load/yaml-reader.js";
import type { Place } from "../rules/rule-runner.js";
import type { SchemaIssue } from "./schema/schema-registry.js";

/** Line and column of a field of one document of a file (empty when unknown). */
export type Locate = (file: string, index: number, path: readonly PathSegment[], key?: boolean) => { line?: number; column?: number };

/** A locate function over a Locator that reads texts when first asked (`parsed`: trees already made, used as they are). */
export function locateWith(texts: ReadonlyMap<string, string> | ((file: string) => string | undefined), parsed?: ReadonlyMap<string, SyntaxTrees>): Locate {
  const locator = new Locator(texts, parsed);
  return (file, index, path, key = false) => locator.locate(file, index, path, { key }) ?? {};
}

/** Where in which document findings are reported: one definition, in the lower layer (rules/). */
export type { Place } from "../rules/rule-runner.js";

export interface IssueOptions {
  readonly code?: ErrorCode;
  /** Said before the message of an issue about the whole value. */
  readonly prefix?: string;
  readonly severity?: Severity;
}

/** Schema (or format) issues as diagnostics. */
export function issueDiagnostics(issues: readonly SchemaIssue[], place: Place, locate: Locate, opts: IssueOptions = {}): Diagnostic[] {
  const { code = ErrorCode.SCHEMA_VIOLATION, prefix, severity = "error" } = opts;
  return issues.map((issue) => {
    const full = [...(place.base ?? []), ...issue.path];
    return {
      severity,
      code,
      file: place.file,
      ...(place.resource === undefined ? {} : { resource: place.resource }),
      ...(full.length === 0 ? {} : { path: formatPath(full) }),
      ...locate(place.file, place.index, full, issue.key),
      message: prefix === undefined || full.length > 0 ? issue.message : `${prefix}: ${issue.message}`,
      ...(issue.hint === undefined ? {} : { hint: issue.hint }),
    };
  });
}

/** A kind's rule findings as diagnostics (errors unless the finding says otherwise). */
export function ruleDiagnostics(findings: readonly RuleFinding[], place: Place, locate: Locate): Diagnostic[] {
  return findings.map((f) => {
    const full = [...(place.base ?? []), ...f.path];
    return {
      severity: f.severity ?? "error",
      code: f.code ?? ErrorCode.RULE_VIOLATION,
      file: place.file,
      ...(place.resource === undefined ? {} : { resource: place.resource }),
      path: formatPath(full),
      ...locate(place.file, place.index, full, f.key === true),
      message: f.message,
      ...(f.hint === undefined ? {} : { hint: f.hint }),
    };
  });
}

export function errorCount(diagnostics: readonly Diagnostic[]): number {
  let n = 0;
  for (const d of diagnostics) if (d.severity === "error") n++;
  return n;
}

/** A diagnostic without the location fields that are unknown. */
export function errorAt(code: ErrorCode, at: Omit<Diagnostic, "severity" | "code" | "message">, message: string, hint?: string): Diagnostic {
  const clean = Object.fromEntries(Object.entries(at).filter(([, v]) => v !== undefined));
  return { severity: "error", code, ...clean, message, ...(hint === undefined ? {} : { hint }) };
}
