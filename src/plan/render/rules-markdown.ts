/**
 * Governance rules' findings in the merge-request comment (`gatesync plan --format markdown`): a
 * "Rules" section after the plan, or — when an error rule (or anything else) stops the plan —
 * the comment itself, with the other errors beside it, so the reviewer sees why on the merge
 * request.
 */
import type { Diagnostic } from "../../errors.js";
import { formatPosition } from "../../errors.js";
import { codeSpan, inlineText } from "./markdown-inline.js";

/** Rows shown before the section says how many more there are (the comment stays under GitHub's limit). */
const shownRows = 100;

const mark: Record<Diagnostic["severity"], string> = { error: "❌ error", warning: "⚠️ warn", info: "ℹ️ info" };

export const isRuleFinding = (d: Diagnostic): boolean => d.rule !== undefined;

function table(findings: readonly Diagnostic[], withRule: boolean): string[] {
  const lines = [withRule ? "| | rule | where | finding |" : "| | code | where | finding |", "|---|---|---|---|"];
  for (const d of findings.slice(0, shownRows)) {
    const where = [formatPosition(d), d.resource, d.path].filter((x) => x !== undefined && x !== "").join(" ");
    lines.push(
      `| ${mark[d.severity]} | ${codeSpan(withRule ? (d.rule ?? d.code) : d.code, true)} | ${codeSpan(where, true)} | ${inlineText(d.message, true)} |`,
    );
  }
  if (findings.length > shownRows) lines.push("", `_… and ${findings.length - shownRows} more: \`gatesync validate\` lists them all._`);
  return lines;
}

/** The "Rules" section: every rule finding, errors first; empty when there are none. */
export function rulesSection(diagnostics: readonly Diagnostic[]): string {
  const findings = diagnostics.filter(isRuleFinding);
  if (findings.length === 0) return "";
  const errors = findings.filter((d) => d.severity === "error").length;
  const order = { error: 0, warning: 1, info: 2 } as const;
  const sorted = [...findings].sort((a, b) => order[a.severity] - order[b.severity]);
  const head = `#### Rules: ${errors} error${errors === 1 ? "" : "s"}, ${findings.length - errors} other finding${findings.length - errors === 1 ? "" : "s"}`;
  return `${[head, "", ...table(sorted, true), ""].join("\n")}\n`;
}

/** The comment for a plan the repository's errors stopped: the rules' findings, then the other errors. */
export function refusedPlanMarkdown(diagnostics: readonly Diagnostic[]): string {
  const errors = diagnostics.filter((d) => d.severity === "error");
  const others = errors.filter((d) => !isRuleFinding(d));
  const lines = [
    "### gatesync plan",
    "",
    `**Not planned: ${errors.length} error${errors.length === 1 ? "" : "s"} in the repository.** Nothing is applied until they are fixed.`,
    "",
  ];
  const rules = rulesSection(diagnostics);
  if (rules !== "") lines.push(rules);
  if (others.length > 0) lines.push("#### Other errors", "", ...table(others, false), "");
  return `${lines.join("\n")}\n`;
}
