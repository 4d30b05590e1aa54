/**
 * The plans of several environments (docs/user/environments.md) in one rendering: the
 * merge-request comment opens with a matrix of which resources change where, then each
 * environment's plan (its breaking changes included) as its own section; JSON is one object
 * keyed by environment. A plan that could not be made says why in its place.
 */
import type { Diagnostic } from "../../errors.js";
import { codeSpan, plainText } from "./markdown-inline.js";
import type { Plan } from "../plan.js";
import type { Action } from "../plan-change.js";
import { markdownLimit, renderJson, renderMarkdown } from "./render.js";
import { summaryLine } from "./render-shared.js";
import { refusedPlanMarkdown, rulesSection } from "./rules-markdown.js";
import { scrubText } from "../../secrets/redaction.js";

export interface EnvironmentPlan {
  readonly environment: string;
  /** Absent when the environment could not be planned (`refused` says why). */
  readonly plan?: Plan;
  readonly ruleFindings?: readonly Diagnostic[];
  readonly refused?: readonly Diagnostic[];
  /** Whether a merge reaches it at once, when tagged or by promotion (merge-reach.ts), when known. */
  readonly reach?: string;
  /** The daemon's freeze or closed sync window holding it now, and what that means for the merge (plan-environments.ts). */
  readonly held?: string;
}

const cell: Record<Action, string> = {
  create: "➕ create",
  update: "✏️ update",
  "no-op": "",
  blocked: "⛔ blocked",
  orphan: "🗑️ orphan",
  adopt: "📥 adopt",
  moved: "🔀 moved",
};

/** Rows of the matrix shown before it says how many more there are. */
const matrixRows = 100;

/** Which resources change in which environment: one row per resource that changes somewhere. */
export function changeMatrix(results: readonly EnvironmentPlan[]): string {
  const ids: string[] = [];
  const byEnv = results.map((r) => {
    const changed = new Map<string, string>();
    for (const c of r.plan?.changes ?? []) {
      if (c.action === "no-op") continue;
      if (!ids.includes(c.id)) ids.push(c.id);
      changed.set(c.id, `${cell[c.action]}${(c.breaking?.length ?? 0) > 0 ? " ⚠" : ""}`);
    }
    return changed;
  });
  if (ids.length === 0) return "No environment changes.\n";
  const head = `| resource | ${results.map((r) => codeSpan(r.environment, true)).join(" | ")} |`;
  const rule = `|---|${results.map(() => "---").join("|")}|`;
  const rows = ids
    .sort()
    .slice(0, matrixRows)
    .map((id, _i) => `| ${codeSpan(id, true)} | ${results.map((r, k) => (r.plan === undefined ? "not planned" : (byEnv[k]!.get(id) ?? ""))).join(" | ")} |`);
  const more = ids.length > matrixRows ? [`\n_… and ${ids.length - matrixRows} more resources (each environment's section lists them)._`] : [];
  return `${[head, rule, ...rows, ...more].join("\n")}\n`;
}

/** The comment: a summary line per environment, the matrix, then each environment's plan. */
export function environmentsMarkdown(results: readonly EnvironmentPlan[], limit = markdownLimit): string {
  const lines = ["### gatesync plan", ""];
  for (const r of results) {
    const reach = r.reach === undefined ? "" : ` — _a merge ${r.reach}_`;
    lines.push(`- ${codeSpan(r.environment)}: ${r.plan === undefined ? "**not planned** (errors below)" : summaryLine(r.plan)}${reach}`);
    if (r.held !== undefined) lines.push(`  - ⏸ **held**: ${plainText(r.held)}`);
  }
  let out = `${lines.join("\n")}\n\n${changeMatrix(results)}\n`;
  const share = Math.floor((limit - out.length) / Math.max(1, results.length));
  for (const r of results) {
    const body = r.plan === undefined ? refusedPlanMarkdown(r.refused ?? []) : renderMarkdown(r.plan, share) + rulesSection(r.ruleFindings ?? []);
    // each environment's plan under its own heading, a level below the comment's
    out += `${body.replace(/^### gatesync plan\n/, `#### Environment ${codeSpan(r.environment)}\n`).replaceAll(/^#### (?!Environment)/gm, "##### ")}\n`;
  }
  return scrubText(out);
}

/** `{ "environments": { NAME: plan } }`, each plan as `gatesync plan --format json` writes it. */
export function environmentsJson(results: readonly EnvironmentPlan[]): string {
  const environments: Record<string, unknown> = {};
  for (const r of results) {
    environments[r.environment] = r.plan === undefined ? { planned: false, diagnostics: r.refused ?? [] } : JSON.parse(renderJson(r.plan));
  }
  return `${scrubText(JSON.stringify({ environments }, null, 2))}\n`;
}

/** The line before an environment's text plan. */
export function environmentsTextHeading(r: EnvironmentPlan, color: boolean): string {
  const title = `== environment ${r.environment} ==`;
  const bold = color ? `\u001b[1m${title}\u001b[22m` : title;
  const held = r.held === undefined ? "" : `held: ${r.held}\n`;
  return `\n${bold}\n${held}${r.plan === undefined ? "not planned: see the errors above\n" : ""}`;
}
