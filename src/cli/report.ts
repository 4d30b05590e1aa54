/** Renders validation findings for terminals (text) and machines (json). */
import { painter } from "../style.js";
import type { Paint } from "../style.js";
import type { Diagnostic } from "../errors.js";
import { formatPosition } from "../errors.js";

export type ReportFormat = "text" | "json";

export interface ValidationReport {
  readonly valid: boolean;
  readonly files: number;
  readonly resources: number;
  readonly diagnostics: readonly Diagnostic[];
}

export function renderValidation(report: ValidationReport, format: ReportFormat, color: boolean): string {
  const errors = report.diagnostics.filter((d) => d.severity === "error").length;
  const warnings = report.diagnostics.length - errors;
  if (format === "json") {
    return `${JSON.stringify({ valid: report.valid, files: report.files, resources: report.resources, errors, warnings, diagnostics: report.diagnostics }, null, 2)}\n`;
  }
  const paint = painter(color);
  const lines = report.diagnostics.map((d) => formatDiagnostic(d, paint));
  const summary = report.valid
    ? paint("green", `valid: ${report.resources} resources in ${report.files} files${warnings > 0 ? `, ${warnings} warning(s)` : ""}`)
    : paint("red", `invalid: ${errors} error(s), ${warnings} warning(s) in ${report.files} files`);
  return `${[...lines, summary].join("\n")}\n`;
}

export function formatDiagnostic(d: Diagnostic, paint: Paint = (_s, t) => t): string {
  const where = [formatPosition(d), d.resource, d.path].filter((x) => x !== undefined && x !== "").join(" ");
  const head = `${paint(d.severity === "error" ? "red" : "yellow", d.severity)}[${d.code}] ${paint("bold", where)}${where === "" ? "" : ": "}${d.message}`;
  return d.hint === undefined ? head : `${head}\n    ${paint("dim", `hint: ${d.hint}`)}`;
}
