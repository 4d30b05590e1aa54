/**
 * Markdown as GitHub and GitLab render it: parsed by markdown-it (CommonMark + GFM tables,
 * raw HTML allowed) into the text a reader sees.
 */
import MarkdownIt from "markdown-it";
import type { Token } from "markdown-it";

const md = new MarkdownIt({ html: true });

/** The visible text of an inline token: text and code spans as they display. */
function visible(inline: Token | undefined): string {
  return (inline?.children ?? []).map((t) => (t.type === "text" || t.type === "code_inline" ? t.content : t.type === "softbreak" ? " " : "")).join("");
}

/** Every table row's cells, as rendered text (the header row first). */
export function tableCells(markdown: string): string[][] {
  const tokens = md.parse(markdown, {});
  const rows: string[][] = [];
  let row: string[] | undefined;
  tokens.forEach((t, i) => {
    if (t.type === "tr_open") row = [];
    if ((t.type === "td_open" || t.type === "th_open") && row !== undefined) row.push(visible(tokens[i + 1]));
    if (t.type === "tr_close" && row !== undefined) rows.push(row);
  });
  return rows;
}

/** The contents of fenced code blocks with their info strings. */
export function fences(markdown: string): Array<{ info: string; content: string }> {
  return md
    .parse(markdown, {})
    .filter((t) => t.type === "fence")
    .map((t) => ({ info: t.info, content: t.content }));
}

/** The rendered text of list items, in order. */
export function listItems(markdown: string): string[] {
  const tokens = md.parse(markdown, {});
  return tokens.flatMap((t, i) => (t.type === "list_item_open" ? [visible(tokens[i + 2])] : []));
}

export function renderHtml(markdown: string): string {
  return md.render(markdown);
}
