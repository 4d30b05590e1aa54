/** The plan for terminals: one line per changed resource, its fields below; colour on a TTY. */
import { selectionLine } from "../../select/selection-text.js";
import { notComparedEntries, notComparedHeading } from "../not-compared.js";
import { painter } from "../../text/style.js";
import { stripControls } from "../../text/bounded-text.js";
import type { Paint, Style } from "../../text/style.js";
import type { FieldChange } from "../diff.js";
import type { Plan } from "../plan.js";
import { fieldChanges } from "../plan-change.js";
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
  summaryLine,
  symbol,
  refusedAt,
} from "./render-shared.js";

const actionStyle: Record<Action, Style> = {
  create: "green",
  update: "yellow",
  "no-op": "dim",
  blocked: "red",
  orphan: "magenta",
  adopt: "cyan",
  moved: "cyan",
};

export function fieldLine(f: FieldChange): string {
  if (f.op === "add") return `+ ${f.path}: ${showValue(f.after)}`;
  if (f.op === "remove") return `- ${f.path}: ${showValue(f.before)}`;
  return `~ ${f.path}: ${showValue(f.before)} → ${showValue(f.after)}`;
}

/** The classification, first in a resource's details: the breaking changes, then the others counted. */
function compatibilityLines(c: PlannedChange): string[] {
  if (c.compatibility === undefined) return [];
  const broken = c.breaking ?? [];
  const lines = broken.slice(0, breakingShown).map((b) => `${breakingMark}: ${b.path}: ${b.reason}`);
  if (broken.length > breakingShown) lines.push(`${breakingMark}: … ${broken.length - breakingShown} more (all in --format json)`);
  const others = otherClasses(c.compatibility);
  if (others !== "") lines.push(`${broken.length > 0 ? "also" : "compatible"}: ${others}`);
  else if (broken.length === 0) lines.push("compatible: takes nothing away");
  return lines;
}

/** A change's lines: its names, values, reasons and hints came from the repository or a server, stripped before they are painted. */
function changeLines(c: PlannedChange, paint: Paint): string[] {
  const s = stripControls;
  const mark = (c.breaking?.length ?? 0) > 0 ? `  ${paint("red", breakingMark)}` : "";
  const moved = c.moved === undefined ? "" : `  ${s(movedText(c))}`;
  const lines = [
    `  ${paint(actionStyle[c.action], `${symbol[c.action]} ${s(c.id)}`)}  ${c.action}${moved}${c.operation === undefined ? "" : `  ${s(callText(c))}`}${mark}${s(refusedAt(c))}`,
  ];
  if (c.reason !== undefined) lines.push(`      ${s(c.reason)}`);
  for (const l of compatibilityLines(c).map(s)) lines.push(`      ${l.startsWith(breakingMark) ? paint("red", l) : paint("dim", l)}`);
  for (const f of fieldChanges(c)) lines.push(`      ${s(fieldLine(f))}`);
  for (const n of c.notes) lines.push(paint("dim", `      note: ${s(n)}`));
  if (c.hint !== undefined) lines.push(paint("dim", `      hint: ${s(c.hint)}`));
  return lines;
}

export function renderText(plan: Plan, color: boolean): string {
  return [...textChunks(plan, color)].join("");
}

/** The text rendering a change at a time (its lines end with a newline each). */
export function* textChunks(plan: Plan, color: boolean): Generator<string> {
  const paint = painter(color);
  const text = (lines: readonly string[]): string => lines.map((l) => `${l}\n`).join("");
  const head = [paint("bold", `gatesync plan${plan.commit === undefined ? "" : ` for ${plan.commit.slice(0, 12)}`} (${stateLine(plan)})`)];
  const empty = emptyStateWarning(plan);
  if (empty !== undefined) head.push(paint("yellow", `⚠ ${empty}`));
  if (plan.selection !== undefined) head.push(paint("yellow", selectionLine(plan.selection)));
  const mass = massDeactivationLine(plan);
  if (mass !== undefined) head.push(paint("red", mass));
  yield text(head);
  const shown = plan.changes.filter((c) => c.action !== "no-op");
  const waves = new Set(shown.map((c) => c.wave));
  // waves of unchanged resources alone are not shown: the shown ones are counted 1, 2, 3 …
  let wave = 0;
  let shownWave = 0;
  let first = true;
  for (const c of shown) {
    const lines: string[] = [];
    if (waves.size > 1 && c.wave !== wave) {
      wave = c.wave;
      shownWave++;
      lines.push("", paint("dim", `wave ${shownWave}`));
    } else if (first) {
      lines.push("");
    }
    first = false;
    lines.push(...changeLines(c, paint));
    yield text(lines);
  }
  const tail = shown.length === 0 ? ["", "  No changes: the servers match the repository as far as the state knows."] : [];
  const notCompared = notComparedEntries(plan.changes);
  if (notCompared.length > 0) {
    tail.push(
      "",
      paint("yellow", `⚠ ${notComparedHeading(notCompared.length)}:`),
      ...notCompared.map((n) => stripControls(`  ${n.id} ${n.path}: ${n.verdict}`)),
    );
  }
  tail.push("", `${paint("bold", "Plan:")} ${summaryLine(plan)}.`, `${callsLine(plan)}.`);
  yield text(tail);
}
