/**
 * The plan as a merge-request comment: a summary table, then a collapsible section per changed
 * resource with its breaking changes listed first and its fields as a `diff` block (GitHub and
 * GitLab colour the - and + lines). Under 65,000 characters (GitHub refuses comments over
 * 65,536), saying what it cut.
 */
import { selectionLine } from "../../select/selection-text.js";
import type { FieldChange } from "../diff.js";
import { codeSpan, escapeHtml, fenced, inlineText, plainText } from "./markdown-inline.js";
import type { Plan } from "../plan.js";
import { fieldChanges } from "../plan-change.js";
import { notComparedEntries, notComparedHeading } from "../not-compared.js";
import type { Action, PlannedChange } from "../plan-change.js";
import {
  breakingMark,
  breakingShown,
  callText,
  callsLine,
  emptyStateWarning,
  massDeactivationLine,
  movedText,
  otherClasses,
  showValue,
  stateLine,
  refusedAt,
  summaryLine,
} from "./render-shared.js";

export const markdownLimit = 65_000;

const icon: Record<Action, string> = { create: "➕", update: "✏️", "no-op": "", blocked: "⛔", orphan: "🗑️", adopt: "📥", moved: "🔀" };

const isBreaking = (c: PlannedChange): boolean => (c.breaking?.length ?? 0) > 0;

/** Diff lines: a change is its old value removed and its new value added. */
function diffLines(f: FieldChange): string[] {
  if (f.op === "add") return [`+ ${f.path}: ${showValue(f.after)}`];
  if (f.op === "remove") return [`- ${f.path}: ${showValue(f.before)}`];
  return [`- ${f.path}: ${showValue(f.before)}`, `+ ${f.path}: ${showValue(f.after)}`];
}

function compatibilityBlock(c: PlannedChange): string {
  if (c.compatibility === undefined) return "";
  const broken = c.breaking ?? [];
  const lines: string[] = [];
  if (broken.length > 0) {
    lines.push(`**${breakingMark}** (${broken.length}):`, "");
    for (const b of broken.slice(0, breakingShown)) lines.push(`- ${codeSpan(b.path)} — ${inlineText(b.reason)}`);
    if (broken.length > breakingShown) lines.push(`- … ${broken.length - breakingShown} more (all in \`gatesync plan --format json\`)`);
    lines.push("");
  }
  const others = otherClasses(c.compatibility);
  if (others !== "" || broken.length === 0)
    lines.push(`${broken.length > 0 ? "Also" : "Compatible"}: ${plainText(others === "" ? "takes nothing away" : others)}.`, "");
  return `${lines.join("\n")}\n`;
}

function section(c: PlannedChange): string {
  const body: string[] = [];
  if (c.reason !== undefined) body.push(`# ${c.reason}`);
  const at = refusedAt(c);
  if (at !== "") body.push(`# at ${at.trim()}`);
  if (c.operation !== undefined) body.push(`# ${callText(c)}`);
  const maxFields = 80;
  const changed = fieldChanges(c);
  for (const f of changed.slice(0, maxFields)) body.push(...diffLines(f));
  if (changed.length > maxFields) body.push(`# … ${changed.length - maxFields} more field changes not shown`);
  for (const n of c.notes) body.push(`# note: ${n}`);
  if (c.hint !== undefined) body.push(`# hint: ${c.hint}`);
  const fields = changed.length > 0 ? ` (${changed.length} field${changed.length === 1 ? "" : "s"})` : "";
  const moved = c.moved === undefined ? "" : ` ${escapeHtml(movedText(c))}`;
  const summary = `${icon[c.action]} <code>${escapeHtml(c.id)}</code> — ${c.action}${moved}${isBreaking(c) ? ` <b>${breakingMark}</b>` : ""}${fields}`;
  return `<details${isBreaking(c) ? " open" : ""}><summary>${summary}</summary>\n\n${compatibilityBlock(c)}${fenced("diff", body.join("\n"))}\n\n</details>\n`;
}

function row(c: PlannedChange): string {
  const call = c.operation === undefined ? inlineText(c.reason ?? "", true) : codeSpan(callText(c), true);
  const moved = c.moved === undefined ? "" : ` ${inlineText(movedText(c), true)}`;
  return `| ${icon[c.action]} | ${codeSpan(c.id, true)} | ${c.action}${moved}${isBreaking(c) ? ` **${breakingMark}**` : ""} | ${call} |\n`;
}

function header(plan: Plan): string[] {
  const commit = plan.commit === undefined ? "" : ` · commit ${codeSpan(plan.commit.slice(0, 12))}`;
  const head = ["### gatesync plan", "", `**${summaryLine(plan)}** — ${callsLine(plan)}${commit} · ${inlineText(stateLine(plan))}`, ""];
  const empty = emptyStateWarning(plan);
  if (empty !== undefined) head.push(`> **⚠ ${inlineText(empty)}**`, "");
  if (plan.selection !== undefined) head.push(`> ${inlineText(selectionLine(plan.selection))}`, "");
  const mass = massDeactivationLine(plan);
  if (mass !== undefined) head.push(`> **${inlineText(mass)}**`, "");
  const broken = plan.changes.filter(isBreaking);
  if (broken.length > 0) {
    const names = broken.slice(0, 20).map((c) => codeSpan(c.id));
    const more = broken.length > names.length ? ` and ${broken.length - names.length} more` : "";
    head.push(
      `> **${breakingMark}**: ${broken.length} change${broken.length === 1 ? "" : "s"} take${broken.length === 1 ? "s" : ""} something away from the API's callers or the key's holders: ${names.join(", ")}${more}.`,
      "",
    );
  }
  head.push(...notComparedBlock(plan));
  return head;
}

/** Which values the plan could not compare (no age identity in the job), a bounded list: the JSON holds them all. */
function notComparedBlock(plan: Plan): string[] {
  const entries = notComparedEntries(plan.changes);
  if (entries.length === 0) return [];
  const shown = 50;
  const lines = entries.slice(0, shown).map((n) => `> - ${codeSpan(n.id)} ${codeSpan(n.path)}: ${inlineText(n.verdict)}`);
  if (entries.length > shown) lines.push(`> - … and ${entries.length - shown} more (all in \`gatesync plan --format json\`, as \`notCompared\`)`);
  return [`> **⚠ ${inlineText(notComparedHeading(entries.length))}:**`, ">", ...lines, ""];
}

export function renderMarkdown(plan: Plan, limit = markdownLimit): string {
  const shown = plan.changes.filter((c) => c.action !== "no-op");
  const head = header(plan);
  if (shown.length === 0) return `${[...head, "No changes: the servers match the repository as far as the state knows."].join("\n")}\n`;
  const reserve = 600; // room for the note on what was cut
  let out = `${head.join("\n")}\n| | resource | action | call |\n|---|---|---|---|\n`;
  let rows = 0;
  for (const c of shown) {
    const r = row(c);
    if (out.length + r.length > limit / 2) break;
    out += r;
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
