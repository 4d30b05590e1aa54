/**
 * Plan renderings: `text` for terminals, `markdown` for merge-request comments, `json` for
 * machines (schema: schemas/plan.schema.json). Sensitive values appear only as (sensitive).
 */
import { scrubText } from "../secrets/redactor.js";
import { painter } from "../style.js";
import type { Style } from "../style.js";
import type { FieldChange } from "./diff.js";
import type { Action, Plan, PlannedChange } from "./plan.js";
import { isSensitiveMarker } from "./sensitive.js";
import { selectionLine } from "../select/selection-text.js";

export type PlanFormat = "text" | "markdown" | "json";

export const markdownLimit = 65_000;

const symbol: Record<Action, string> = { create: "+", update: "~", "no-op": "=", blocked: "!", orphan: "-" };

/** One value, short: JSON, sensitive values hidden, long ones cut. */
export function showValue(value: unknown, max = 160): string {
  if (value === undefined) return "(unknown)";
  if (isSensitiveMarker(value)) return "(sensitive)";
  const text = JSON.stringify(value, (_k, v: unknown) => (isSensitiveMarker(v) ? "(sensitive)" : v)) ?? typeof value;
  return text.length > max ? `${text.slice(0, max)}… (${text.length} characters)` : text;
}

function fieldLine(f: FieldChange): string {
  if (f.op === "add") return `+ ${f.path}: ${showValue(f.after)}`;
  if (f.op === "remove") return `- ${f.path}: ${showValue(f.before)}`;
  return `~ ${f.path}: ${showValue(f.before)} → ${showValue(f.after)}`;
}

function callText(c: PlannedChange): string {
  if (c.operation === undefined) return "";
  const tags = [c.operation.batchable ? "batch" : "", c.quotaReset === true ? "quota reset" : "", c.deactivate === true ? "deactivate" : ""].filter((t) => t !== "");
  return `${c.operation.method} ${c.operation.path}${c.operation.query}${tags.length > 0 ? ` [${tags.join(", ")}]` : ""}`;
}

export function summaryLine(plan: Plan): string {
  const s = plan.summary;
  const parts = [`${s.create} to create`, `${s.update} to update`, `${s.blocked} blocked`, `${s.orphan} orphaned${s.deactivate > 0 ? ` (${s.deactivate} to deactivate)` : ""}`, `${s.noop} unchanged`];
  if (s.quotaResets > 0) parts.push(`${s.quotaResets} quota reset${s.quotaResets === 1 ? "" : "s"}`);
  return parts.join(", ");
}

export function callsLine(plan: Plan): string {
  const c = plan.summary.calls;
  const per = [`gateway ${c.gateway}`, `portal ${c.portal}`, `dashboard ${c.dashboard}`, `llm ${c.llm}`];
  const batch = c.batchCalls > 0 ? `, ${c.batchCalls} batch call${c.batchCalls === 1 ? "" : "s"} carrying ${c.batched} gateway change${c.batched === 1 ? "" : "s"}` : "";
  return `${c.total} HTTP call${c.total === 1 ? "" : "s"} (${per.join(", ")}${batch})`;
}

/** Every rendering passes through the redaction layer on its way out. */
export function renderPlan(plan: Plan, format: PlanFormat, opts: { color?: boolean } = {}): string {
  if (format === "json") return renderJson(plan);
  if (format === "markdown") return scrubText(renderMarkdown(plan));
  return scrubText(renderText(plan, opts.color === true));
}

export function renderJson(plan: Plan): string {
  const out = { $schema: "https://gatesync.dev/schemas/plan.schema.json", ...plan };
  return scrubText(`${JSON.stringify(out, (_k, v: unknown) => (isSensitiveMarker(v) ? { sensitive: true } : v), 2)}\n`);
}

const actionStyle: Record<Action, Style> = { create: "green", update: "yellow", "no-op": "dim", blocked: "red", orphan: "magenta" };

export function renderText(plan: Plan, color: boolean): string {
  const paint = painter(color);
  const lines: string[] = [];
  lines.push(paint("bold", `gatesync plan${plan.commit === undefined ? "" : ` for ${plan.commit.slice(0, 12)}`} (state serial ${plan.state.serial})`));
  if (plan.selection !== undefined) lines.push(paint("yellow", selectionLine(plan.selection)));
  const header = lines.length;
  const shown = plan.changes.filter((c) => c.action !== "no-op");
  const waves = new Set(shown.map((c) => c.wave));
  let wave = 0;
  for (const c of shown) {
    if (waves.size > 1 && c.wave !== wave) {
      wave = c.wave;
      lines.push("", paint("dim", `wave ${wave}`));
    } else if (lines.length === header) {
      lines.push("");
    }
    const head = `${paint(actionStyle[c.action], `${symbol[c.action]} ${c.id}`)}  ${c.action}${c.operation === undefined ? "" : `  ${callText(c)}`}`;
    lines.push(`  ${head}`);
    if (c.reason !== undefined) lines.push(`      ${c.reason}`);
    for (const f of c.fields) lines.push(`      ${fieldLine(f)}`);
    for (const n of c.notes) lines.push(paint("dim", `      note: ${n}`));
    if (c.hint !== undefined) lines.push(paint("dim", `      hint: ${c.hint}`));
  }
  if (shown.length === 0) lines.push("", "  No changes: the servers match the repository as far as the state knows.");
  lines.push("", `${paint("bold", "Plan:")} ${summaryLine(plan)}.`, `${callsLine(plan)}.`);
  return `${lines.join("\n")}\n`;
}

const icon: Record<Action, string> = { create: "➕", update: "✏️", "no-op": "", blocked: "⛔", orphan: "🗑️" };

function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;");
}

function escapeCell(s: string): string {
  return escapeHtml(s).replace(/\|/g, "\\|").replace(/\n/g, " ");
}

/** A fenced block whose fence is longer than any run of backticks inside. */
function fenced(lang: string, body: string): string {
  const longest = Math.max(2, ...[...body.matchAll(/`+/g)].map((m) => m[0].length));
  const fence = "`".repeat(longest + 1);
  return `${fence}${lang}\n${body}\n${fence}`;
}

function section(c: PlannedChange): string {
  const body: string[] = [];
  if (c.reason !== undefined) body.push(`# ${c.reason}`);
  if (c.operation !== undefined) body.push(`# ${callText(c)}`);
  let diffLines = c.fields.map(fieldLine);
  const maxLines = 80;
  if (diffLines.length > maxLines) diffLines = [...diffLines.slice(0, maxLines), `# … ${c.fields.length - maxLines} more field changes not shown`];
  body.push(...diffLines);
  for (const n of c.notes) body.push(`# note: ${n}`);
  if (c.hint !== undefined) body.push(`# hint: ${c.hint}`);
  return `<details><summary>${icon[c.action]} <code>${escapeHtml(c.id)}</code> — ${c.action}${c.fields.length > 0 ? ` (${c.fields.length} field${c.fields.length === 1 ? "" : "s"})` : ""}</summary>\n\n${fenced("diff", body.join("\n"))}\n\n</details>\n`;
}

export function renderMarkdown(plan: Plan, limit = markdownLimit): string {
  const shown = plan.changes.filter((c) => c.action !== "no-op");
  const head = [
    "### gatesync plan",
    "",
    `**${summaryLine(plan)}** — ${callsLine(plan)}${plan.commit === undefined ? "" : ` · commit \`${plan.commit.slice(0, 12)}\``} · state serial ${plan.state.serial}`,
    "",
    ...(plan.selection === undefined ? [] : [`> ${escapeHtml(selectionLine(plan.selection))}`, ""]),
  ];
  if (shown.length === 0) return `${[...head, "No changes: the servers match the repository as far as the state knows."].join("\n")}\n`;
  const reserve = 600; // room for the note on what was cut
  let out = `${head.join("\n")}\n| | resource | action | call |\n|---|---|---|---|\n`;
  let rows = 0;
  for (const c of shown) {
    const row = `| ${icon[c.action]} | \`${escapeCell(c.id)}\` | ${c.action} | ${c.operation === undefined ? escapeCell(c.reason ?? "") : `\`${escapeCell(callText(c))}\``} |\n`;
    if (out.length + row.length > limit / 2) break;
    out += row;
    rows++;
  }
  if (rows < shown.length) out += `\n_… and ${shown.length - rows} more rows not shown._\n`;
  out += "\n";
  let sections = 0;
  for (const c of shown) {
    const s = section(c);
    if (out.length + s.length > limit - reserve) break;
    out += s;
    sections++;
  }
  if (sections < shown.length) {
    out += `\n> **${shown.length - sections} of ${shown.length} changed resources are not detailed here**: the comment would pass ${limit.toLocaleString("en")} characters. The full plan is in the JSON output (\`gatesync plan --format json\`).\n`;
  }
  return out;
}
