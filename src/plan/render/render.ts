/**
 * Plan renderings: `text` for terminals (render-text.ts), `markdown` for merge-request comments
 * (render-markdown.ts), `json` for machines (schema: schemas/plan.schema.json). Sensitive
 * values appear only as (sensitive).
 */
import type { Plan } from "../plan.js";
import { renderMarkdown } from "./render-markdown.js";
import { textChunks } from "./render-text.js";
import { scrubText } from "../../secrets/redaction.js";
import { isSensitiveMarker } from "../../secrets/markers.js";
import { randomBytes } from "node:crypto";
import { DocumentRef } from "../../kinds/document-ref.js";
import { InternalError } from "../../errors.js";

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
  const documents = new HeldDocuments();
  for (const [i, c] of plan.changes.entries())
    yield `${i === 0 ? "" : ",\n"}    ${documents.spliced(JSON.stringify(c, documents.replacer, 2).replaceAll("\n", "\n    "))}`;
  yield `\n  ]${frame.slice(at + changesMark.length + 2)}\n`;
}

/**
 * The documents of a change whose JSON their validation kept (DocumentRef.printedJson): each
 * is written as a placeholder, then its text spliced in, indented where it stands — instead of
 * parsing it and writing it again (a third of a 10,000-API plan's printing). The placeholder
 * holds a random part, so no string of a repository can pass for one.
 */
class HeldDocuments {
  private readonly mark = `@@gatesync-document-${randomBytes(9).toString("base64url")}-`;
  private texts: string[] = [];

  /** For JSON.stringify: markers hidden; an object holding printable documents gets placeholders in their place (copied, not changed). */
  readonly replacer = (key: string, value: unknown): unknown => {
    if (isSensitiveMarker(value)) return hideMarkers(key, value);
    if (value === null || typeof value !== "object") return value;
    let copy: Record<string, unknown> | undefined;
    for (const name in value) {
      const member = (value as Record<string, unknown>)[name];
      const text = member instanceof DocumentRef ? member.printedJson() : undefined;
      if (text === undefined) continue;
      copy ??= (Array.isArray(value) ? [...(value as unknown[])] : { ...value }) as Record<string, unknown>;
      // defined, not assigned: a `__proto__` key stays a key
      Object.defineProperty(copy, name, { value: `${this.mark}${this.texts.push(text) - 1}`, enumerable: true, writable: true, configurable: true });
    }
    return copy ?? value;
  };

  /** The change's text with each placeholder replaced by its document, indented as the line it stands on. */
  spliced(text: string): string {
    if (this.texts.length === 0) return text;
    const parts: string[] = [];
    let from = 0;
    for (let i = 0; i < this.texts.length; i++) {
      const placeholder = `"${this.mark}${i}"`;
      const at = text.indexOf(placeholder, from);
      if (at < 0) throw new InternalError("a document placeholder was not found in the plan's JSON");
      const lineStart = text.lastIndexOf("\n", at) + 1;
      const indent = /^ */.exec(text.slice(lineStart, at))![0];
      parts.push(text.slice(from, at), this.texts[i]!.replaceAll("\n", `\n${indent}`));
      from = at + placeholder.length;
    }
    parts.push(text.slice(from));
    this.texts = [];
    return parts.join("");
  }
}
