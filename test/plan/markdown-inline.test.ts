/** The markdown building blocks, checked against a CommonMark/GFM parser for any text. */
import fc from "fast-check";
import { describe, expect, it } from "vitest";
import { codeSpan, fenced, inlineText, plainText } from "../../src/plan/render/markdown-inline.js";
import { fences, renderHtml, tableCells } from "../helpers/markdown.js";

// printable ASCII (every markdown metacharacter) and a few non-ASCII characters
const text = fc.string({
  unit: fc.oneof(fc.constantFrom(..."`|&<>*_[]()#!~\\ -+.:;\"'é→⚠"), fc.string({ unit: "grapheme-ascii", minLength: 1, maxLength: 1 })),
  minLength: 1,
  maxLength: 40,
});
const visibleLine = (s: string): string => s.replace(/\r?\n|\r/g, " ");
const cellOf = (cell: string): string | undefined => tableCells(`| a |\n|---|\n| ${cell} |\n`)[1]?.[0];

describe("markdown inline pieces", () => {
  it("a code span in a table cell shows its text exactly", () => {
    fc.assert(
      fc.property(text, (s) => {
        fc.pre(s.trim() !== "" && !/^[ ]|[ ]$/.test(s));
        expect(cellOf(codeSpan(s, true))).toBe(visibleLine(s));
      }),
      { numRuns: 300 },
    );
  });

  it("plain text and text with code spans never turn into markup", () => {
    fc.assert(
      fc.property(text, (s) => {
        fc.pre(s.trim() === s && s !== "");
        expect(cellOf(plainText(s))).toBe(visibleLine(s));
        expect(renderHtml(plainText(s))).not.toMatch(/<(em|strong|a|img|code|del|h\d)\b/);
        // the spans of a reason stay code, the rest stays text
        const html = renderHtml(inlineText(`see ${codeSpan(s)} and *${s}*`));
        expect(html).not.toMatch(/<(em|strong|a|img|del)\b/);
      }),
      { numRuns: 300 },
    );
  });

  it("a fence outgrows any backtick run, so the block ends where it should", () => {
    fc.assert(
      fc.property(fc.array(text, { minLength: 1, maxLength: 5 }), (lines) => {
        const body = lines.map(visibleLine).join("\n");
        const blocks = fences(`${fenced("diff", body)}\n\nafter`);
        expect(blocks).toHaveLength(1);
        expect(blocks[0]?.content).toBe(`${body}\n`);
      }),
      { numRuns: 200 },
    );
  });

  it("an ampersand in a code span is an ampersand, not an entity", () => {
    expect(cellOf(codeSpan("PATCH /gw/apis/oas/p?listenPath=%2Fp%2F&mockResponse=true", true))).toBe(
      "PATCH /gw/apis/oas/p?listenPath=%2Fp%2F&mockResponse=true",
    );
    expect(cellOf(codeSpan("a | b", true))).toBe("a | b");
    expect(cellOf(inlineText("the update ignores `a|b` & <c>", true))).toBe("the update ignores a|b & <c>");
  });
});
