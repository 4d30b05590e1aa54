/**
 * Plan renderings: `text` for terminals (render-text.ts), `markdown` for merge-request comments
 * (render-markdown.ts), `json` for machines (schema: schemas/plan.schema.json). Sensitive
 * values appear only as (sensitive).
 */
import type { Plan } from "./plan.js";
import { renderMarkdown } from "./render-markdown.js";
import { renderText } from "./render-text.js";
import { scrubText } from "../redactor.js";
import { isSensitiveMarker } from "../kinds/sensitive.js";

export { markdownLimit, renderMarkdown } from "./render-markdown.js";
export { renderText } from "./render-text.js";
export { showValue, summaryLine, callsLine } from "./render-shared.js";

export type PlanFormat = "text" | "markdown" | "json";

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
