/**
 * Plan renderings: `text` for terminals (render-text.ts), `markdown` for merge-request comments
 * (render-markdown.ts), `json` for machines (schema: schemas/plan.schema.json). Sensitive
 * values appear only as (sensitive).
 */
import type { Plan } from "./plan.js";
import { renderMarkdown } from "./render-markdown.js";
import { textChunks } from "./render-text.js";
import { scrubText } from "../secrets/redaction.js";
import { isSensitiveMarker } from "../secrets/markers.js";

export { markdownLimit, renderMarkdown } from "./render-markdown.js";
export { renderText } from "./render-text.js";
export { showValue, summaryLine, callsLine } from "./render-shared.js";

export type PlanFormat = "text" | "markdown" | "json";

/** Every rendering passes through the redaction layer on its way out. */
export function renderPlan(plan: Plan, format: PlanFormat, opts: { color?: boolean } = {}): string {
  return [...planChunks(plan, format, opts)].join("");
}

/**
 * The rendering in pieces (a change at a time for text and JSON), each through the redaction
 * layer: a plan of 100,000 changes is written without its whole text in memory, and documents
 * held by reference are read one at a time.
 */
export function* planChunks(plan: Plan, format: PlanFormat, opts: { color?: boolean } = {}): Generator<string> {
  if (format === "markdown") yield scrubText(renderMarkdown(plan));
  else for (const chunk of format === "json" ? jsonChunks(plan) : textChunks(plan, opts.color === true)) yield scrubText(chunk);
}

export function renderJson(plan: Plan): string {
  return [...planChunks(plan, "json")].join("");
}

const hideMarkers = (_k: string, v: unknown): unknown => (isSensitiveMarker(v) ? { sensitive: true } : v);

/** Stands for the list of changes in the plan's own text, which is written around it. */
const changesMark = "@@gatesync-changes@@";

/** Exactly `JSON.stringify(plan, …, 2)`, written a change at a time. */
function* jsonChunks(plan: Plan): Generator<string> {
  const frame = JSON.stringify({ $schema: "https://gatesync.dev/schemas/plan.schema.json", ...plan, changes: changesMark }, hideMarkers, 2);
  const at = frame.indexOf(`"changes": "${changesMark}"`) + `"changes": `.length;
  if (plan.changes.length === 0) {
    yield `${frame.slice(0, at)}[]${frame.slice(at + changesMark.length + 2)}\n`;
    return;
  }
  yield `${frame.slice(0, at)}[\n`;
  for (const [i, c] of plan.changes.entries()) yield `${i === 0 ? "" : ",\n"}    ${JSON.stringify(c, hideMarkers, 2).replaceAll("\n", "\n    ")}`;
  yield `\n  ]${frame.slice(at + changesMark.length + 2)}\n`;
}
