/**
 * The one redaction layer, by value. Every resolved secret value and every credential in force
 * is registered here when it is read; every string that leaves the process or is stored (log
 * lines, state records, plan and apply renderings, /status, error messages, command output)
 * passes through `scrubText` / `scrubDeep` on its way out. A value is also found in the forms a
 * server's echo or a log line gives it: JSON-escaped (once and twice: batch item bodies are
 * JSON inside JSON) and URL-encoded (upper- and lower-case escapes, `+` for spaces).
 *
 * A value shorter than `minScrubLength` is not scrubbed from free text: replacing every
 * occurrence of, say, `abc` would mangle unrelated text. Such values still never appear in a
 * plan or the state (those hold keyed hashes of sensitive fields); `validate` warns about them.
 */
import { descend, rewrite } from "../text/rewrite.js";

export const redactedText = "[redacted]";

/** Values shorter than this are not scrubbed from free text (see above). */
export const minScrubLength = 8;

const jsonEscaped = (v: string): string => JSON.stringify(v).slice(1, -1);

/** The forms in which a value may show up in text gatesync writes. */
export function formsOf(value: string): string[] {
  const once = jsonEscaped(value);
  const url = encodeURIComponent(value);
  const forms = [value, once, jsonEscaped(once), url, url.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase()), url.replace(/%20/g, "+"), jsonEscaped(url)];
  return [...new Set(forms)];
}

const escapeRegExp = (s: string): string => s.replace(/[\\^$.*+?()[\]{}|]/g, "\\$&");

export class Redactor {
  private readonly values = new Set<string>();
  private pattern: RegExp | undefined;
  private stale = false;

  /** Registers a secret value; false when it is too short to be scrubbed from free text. */
  add(value: string | undefined): boolean {
    if (value === undefined || value === "") return true;
    if (value.length < minScrubLength) return false;
    if (!this.values.has(value)) {
      this.values.add(value);
      this.stale = true;
    }
    return true;
  }

  get size(): number {
    return this.values.size;
  }

  private current(): RegExp | undefined {
    if (this.stale) {
      const forms = [...new Set([...this.values].flatMap(formsOf))].sort((a, b) => b.length - a.length);
      this.pattern = forms.length === 0 ? undefined : new RegExp(forms.map(escapeRegExp).join("|"), "g");
      this.stale = false;
    }
    return this.pattern;
  }

  /** The text with every registered value (in every form) replaced by `[redacted]`. */
  scrubText(text: string): string {
    const pattern = this.current();
    if (pattern === undefined || text.length < minScrubLength) return text;
    return text.replace(pattern, redactedText);
  }

  /** A JSON-like value with every string scrubbed; parts without a hit are returned as they are. */
  scrubDeep<T>(value: T): T {
    if (this.current() === undefined) return value;
    return this.walk(value) as T;
  }

  private walk(value: unknown): unknown {
    return rewrite(value, (v) => {
      if (typeof v === "string") return this.scrubText(v);
      if (v === null || typeof v !== "object") return v;
      // class instances (a document held by reference …) are not JSON data: left as they are
      return Array.isArray(v) || Object.getPrototypeOf(v) === Object.prototype || Object.getPrototypeOf(v) === null ? descend : v;
    });
  }

  /** Forgets every value (tests). */
  clear(): void {
    this.values.clear();
    this.stale = true;
  }
}

/** The process's redactor: one registry, so every sink scrubs the same values. */
export const redactor = new Redactor();

export const registerSecret = (value: string | undefined): boolean => redactor.add(value);
export const scrubText = (text: string): string => redactor.scrubText(text);
export const scrubDeep = <T>(value: T): T => redactor.scrubDeep(value);
