import { describe, expect, it } from "vitest";
import { Redactor, formsOf, minScrubLength, redactedText } from "../../src/secrets/redaction.js";
import { stripUrlCredentials } from "../../src/secrets/credentials.js";

describe("the redaction layer", () => {
  it("scrubs a value in every form a log line or a server's echo gives it", () => {
    const r = new Redactor();
    const value = 'p@ss "word"/ä&x=1';
    r.add(value);
    const texts = [
      `raw ${value} end`,
      JSON.stringify({ echo: value }),
      JSON.stringify({ body: JSON.stringify({ echo: value }) }),
      `https://h/x?token=${encodeURIComponent(value)}`,
      `https://h/x?token=${encodeURIComponent(value).replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase())}`,
      `a=${encodeURIComponent(value).replace(/%20/g, "+")}`,
    ];
    for (const t of texts) {
      const out = r.scrubText(t);
      expect(out).toContain(redactedText);
      for (const form of formsOf(value)) expect(out).not.toContain(form);
    }
  });

  it("scrubs nested values, copying only what changes", () => {
    const r = new Redactor();
    r.add("secret-value-1234");
    const untouched = { a: 1, b: ["x"] };
    const input = { untouched, nested: { list: ["ok", "Bearer secret-value-1234"] } };
    const out = r.scrubDeep(input);
    expect(out.nested.list[1]).toBe(`Bearer ${redactedText}`);
    expect(out.untouched).toBe(untouched);
    expect(input.nested.list[1]).toBe("Bearer secret-value-1234");
    expect(r.scrubDeep(untouched)).toBe(untouched);
  });

  it("does not scrub a value too short to scrub safely, and says so", () => {
    const r = new Redactor();
    expect(r.add("a".repeat(minScrubLength - 1))).toBe(false);
    expect(r.add("b".repeat(minScrubLength))).toBe(true);
    expect(r.scrubText(`${"a".repeat(minScrubLength - 1)} ${"b".repeat(minScrubLength)}`)).toBe(`${"a".repeat(minScrubLength - 1)} ${redactedText}`);
  });

  it("prefers the longest match when one value contains another", () => {
    const r = new Redactor();
    r.add("abcdefgh");
    r.add("abcdefgh-and-more");
    expect(r.scrubText("x abcdefgh-and-more y")).toBe(`x ${redactedText} y`);
  });
});

describe("URL credentials in git's output", () => {
  it("are removed whatever the configured URL looked like", () => {
    expect(stripUrlCredentials("fatal: could not read Password for 'https://ghp_abc123@github.com': terminal prompts disabled")).toBe(
      "fatal: could not read Password for 'https://github.com': terminal prompts disabled",
    );
    expect(stripUrlCredentials("remote: https://user:p%40ss@host:8443/x.git and ssh://git@host/y")).toBe("remote: https://host:8443/x.git and ssh://host/y");
    expect(stripUrlCredentials("git@host:org/repo.git")).toBe("git@host:org/repo.git");
  });
});
