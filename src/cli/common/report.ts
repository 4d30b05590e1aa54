/** Renders validation findings for terminals (text), machines (json) and CI annotations (github, gitlab). */
import { createHash } from "node:crypto";
import { painter } from "../../text/style.js";
import type { Diagnostic } from "../../errors.js";
import { formatDiagnostic } from "../../errors.js";

export type ReportFormat = "text" | "json" | "github" | "gitlab";

export interface ValidationReport {
  readonly valid: boolean;
  readonly files: number;
  readonly resources: number;
  readonly diagnostics: readonly Diagnostic[];
}

/** The report's files are named from the repository's root already (`inRepository`), in every format. */
export function renderValidation(report: ValidationReport, format: ReportFormat, color: boolean): string {
  const errors = report.diagnostics.filter((d) => d.severity === "error").length;
  const warnings = report.diagnostics.length - errors;
  if (format === "json") {
    return `${JSON.stringify({ valid: report.valid, files: report.files, resources: report.resources, errors, warnings, diagnostics: report.diagnostics }, null, 2)}\n`;
  }
  if (format === "github") return githubAnnotations(report.diagnostics, errors, warnings);
  if (format === "gitlab") return `${JSON.stringify(gitlabCodeQuality(report.diagnostics), null, 2)}\n`;
  const paint = painter(color);
  const lines = report.diagnostics.map((d) => formatDiagnostic(d, paint));
  const summary = report.valid
    ? paint("green", `valid: ${report.resources} resources in ${report.files} files${warnings > 0 ? `, ${warnings} warning(s)` : ""}`)
    : paint("red", `invalid: ${errors} error(s), ${warnings} warning(s) in ${report.files} files`);
  return `${[...lines, summary].join("\n")}\n`;
}

/** The message of an annotation: what is wrong, where in the resource, and the hint. */
function annotationText(d: Diagnostic): string {
  const where = [d.resource, d.path].filter((x) => x !== undefined && x !== "").join(" ");
  return `${where === "" ? "" : `${where}: `}${d.message}${d.hint === undefined ? "" : `\nhint: ${d.hint}`}`;
}

// GitHub workflow commands: data escapes %, CR, LF; property values also : and ,
const escapeData = (s: string): string => s.replaceAll("%", "%25").replaceAll("\r", "%0D").replaceAll("\n", "%0A");
const escapeProperty = (s: string): string => escapeData(s).replaceAll(":", "%3A").replaceAll(",", "%2C");

/** A governance rule's finding is named by its rule: `RULESET_VIOLATION/listen-path-prefix`. */
const checkName = (d: Diagnostic): string => (d.rule === undefined ? d.code : `${d.code}/${d.rule}`);

const githubLevel: Record<Diagnostic["severity"], string> = { error: "error", warning: "warning", info: "notice" };

/** `::error file=…,line=…,col=…,title=…::message` per finding: GitHub shows them on the diff's lines. */
function githubAnnotations(diagnostics: readonly Diagnostic[], errors: number, warnings: number): string {
  const lines = diagnostics.map((d) => {
    const props = [
      ...(d.file === undefined ? [] : [`file=${escapeProperty(d.file)}`]),
      ...(d.line === undefined ? [] : [`line=${d.line}`]),
      ...(d.column === undefined ? [] : [`col=${d.column}`]),
      `title=${escapeProperty(`gatesync ${checkName(d)}`)}`,
    ];
    return `::${githubLevel[d.severity]} ${props.join(",")}::${escapeData(annotationText(d))}`;
  });
  return `${[...lines, `gatesync validate: ${errors} error(s), ${warnings} warning(s)`].join("\n")}\n`;
}

interface CodeQualityIssue {
  readonly description: string;
  readonly check_name: string;
  readonly fingerprint: string;
  readonly severity: "major" | "minor" | "info";
  readonly location: { readonly path: string; readonly lines: { readonly begin: number } };
}

/** GitLab Code Quality report (`artifacts: reports: codequality`): shown on the merge request's diff. */
function gitlabCodeQuality(diagnostics: readonly Diagnostic[]): CodeQualityIssue[] {
  return diagnostics.map((d) => {
    const file = d.file ?? "gatesync.yaml";
    const description = annotationText(d);
    return {
      description,
      check_name: checkName(d),
      // stable across pipelines while the finding is the same, so GitLab can tell new from fixed
      fingerprint: createHash("sha256")
        .update(`${checkName(d)}\0${file}\0${d.resource ?? ""}\0${d.path ?? ""}\0${d.message}`)
        .digest("hex"),
      severity: d.severity === "error" ? "major" : d.severity === "warning" ? "minor" : "info",
      location: { path: file, lines: { begin: d.line ?? 1 } },
    };
  });
}
