/**
 * Inline markdown that renders the same on GitHub and GitLab (CommonMark + GFM): code spans
 * hold their text literally (no entities: they would show as `&amp;`), fences outgrow any
 * backtick run inside, and text outside code is escaped instead of interpreted.
 */

const longestRun = (s: string): number => Math.max(0, ...[...s.matchAll(/`+/g)].map((m) => m[0].length));

/** A code span holding `s` literally; in a table cell, `|` must be escaped even inside code. */
export function codeSpan(s: string, inTable = false): string {
  let body = s.replace(/\r?\n|\r/g, " ");
  if (body === "") return "";
  if (inTable) body = body.replace(/\|/g, "\\|");
  const fence = "`".repeat(longestRun(body) + 1);
  // a span that starts or ends with a backtick (or a space) needs a space of padding on both sides
  const pad = /^[` ]|[` ]$/.test(body) && body.trim() !== "" ? " " : "";
  return `${fence}${pad}${body}${pad}${fence}`;
}

/** Plain text: every character that could start markup is backslash-escaped. */
export function plainText(s: string): string {
  return s.replace(/\r?\n|\r/g, " ").replace(/[\\`*_[\]<>&~#!|]/g, (c) => `\\${c}`);
}

/**
 * Text that may hold code spans (`like this`): the spans are kept as code (re-fenced), the rest
 * is escaped. An unmatched backtick run is text.
 */
export function inlineText(s: string, inTable = false): string {
  let out = "";
  let last = 0;
  for (const m of s.matchAll(/(?<!`)(`+)(?!`)([\s\S]*?[^`])\1(?!`)/g)) {
    out += plainText(s.slice(last, m.index)) + codeSpan(m[2] ?? "", inTable);
    last = m.index + m[0].length;
  }
  return out + plainText(s.slice(last));
}

/** Text for raw HTML (inside `<summary>`): entities are right there. */
export function escapeHtml(s: string): string {
  return s.replace(/&/g, "&amp;").replace(/</g, "&lt;").replace(/>/g, "&gt;").replace(/"/g, "&quot;");
}

/** A fenced block whose fence is longer than any run of backticks inside (at least three). */
export function fenced(lang: string, body: string): string {
  const fence = "`".repeat(Math.max(3, longestRun(body) + 1));
  return `${fence}${lang}\n${body}\n${fence}`;
}
