/**
 * The contract table's machinery: what a row is, how it is sent over real HTTP, and how the
 * reference is cut into the sentences every row quotes (so that a sentence of the reference
 * that no row quotes, and no entry of `descriptive` excuses, fails the test).
 */
import { readFileSync } from "node:fs";
import path from "node:path";
import { fileURLToPath } from "node:url";
import { expect } from "vitest";
import type { SandboxHandle } from "../../../src/sandbox/sandbox.js";
import type { Receiver } from "../../helpers/receiver.js";
import type { Answer } from "../../helpers/sandbox.js";
import { call, dash, gw, llm, portal } from "../../helpers/sandbox.js";

export interface World {
  readonly sb: SandboxHandle;
  readonly upstream: Receiver;
}

/** One request. `auth` picks the credential (default: the interface's own, from the path). */
export interface Send {
  readonly method: string;
  /** Below the sandbox's base address. */
  readonly path: string;
  readonly auth?: "none" | "gw" | "portal" | "dash" | "llm" | Record<string, string>;
  readonly headers?: Record<string, string>;
  /** A string is sent as it is; anything else as JSON (`null` as `null`). */
  readonly body?: unknown;
}

export interface Expect {
  readonly status: number;
  /** The whole body, parsed. */
  readonly body?: unknown;
  /** Part of the body (toMatchObject). */
  readonly match?: object;
  /** The raw body text. */
  readonly text?: string;
  readonly headers?: Record<string, string | RegExp>;
}

export interface Row {
  /** The heading of the reference section the behaviour is written under. */
  readonly section: string;
  /** Words of the reference (in that section) stating the behaviour. */
  readonly quote: string;
  /** What this row shows, when the quote alone does not say it. */
  readonly case?: string;
  before?(w: World): void | Promise<void>;
  /** Requests sent (or steps taken) before the one checked; their answers are not checked. */
  readonly prepare?: ReadonlyArray<Send | ((w: World) => void | Promise<void>)>;
  readonly send: Send;
  readonly expect: Expect;
  /** Checks of the sandbox's objects (or the upstream) after the answer. */
  after?(w: World, answer: Answer): void | Promise<void>;
}

/** A sentence of the reference that states no behaviour of the interfaces, with the reason. */
export interface Descriptive {
  readonly section: string;
  readonly quote: string;
  readonly why: string;
}

const here = path.dirname(fileURLToPath(import.meta.url));
/** The reference as this repository carries it (test/fixtures/shared, refreshed by scripts/refresh-shared.sh). */
export const referencePath = path.resolve(here, "../../fixtures/shared/reference/interface-behaviour.md");

export interface Sentence {
  readonly section: string;
  readonly text: string;
}

const squash = (s: string): string => s.replace(/\s+/g, " ").trim();

/**
 * The reference as sentences under their section headings: each list item and paragraph,
 * cut after every `.` followed by a capital, a backtick, a quote or a parenthesis, and at
 * every `;` (a clause is one behaviour).
 */
export function referenceSentences(markdown = readFileSync(referencePath, "utf8")): Sentence[] {
  const blocks: Array<{ section: string; text: string }> = [];
  let section = "";
  let current: string[] = [];
  const flush = (): void => {
    if (current.length > 0) blocks.push({ section, text: squash(current.join(" ")) });
    current = [];
  };
  for (const line of markdown.split("\n")) {
    const heading = /^#{1,3}\s+(.*)$/.exec(line);
    if (heading !== null) {
      flush();
      section = heading[1]!.trim();
    } else if (line.trim() === "") flush();
    else if (/^\s*(-|\d+\.)\s/.test(line)) {
      flush();
      current.push(line.replace(/^\s*(-|\d+\.)\s+/, ""));
    } else current.push(line.trim());
  }
  flush();
  return blocks.flatMap((b) => b.text.split(/(?<=\.\)?)\s+(?=[A-Z`"(*])|;\s+/).map((text) => ({ section: b.section, text: squash(text) })));
}

/** Does the quote belong to the sentence? */
export function quotes(sentence: Sentence, item: { section: string; quote: string }): boolean {
  return sentence.section === item.section && sentence.text.includes(squash(item.quote));
}

const credentials: Record<string, Record<string, string>> = { gw, portal, dash, llm, none: {} };

function defaultAuth(p: string): Record<string, string> {
  if (p.startsWith("/gw/") || p === "/gw") return gw;
  if (p.startsWith("/portal/api")) return portal;
  if (p.startsWith("/llm/api")) return llm;
  if (p.startsWith("/api/")) return dash;
  return {};
}

export async function send(w: World, s: Send): Promise<Answer> {
  const auth = s.auth === undefined ? defaultAuth(s.path) : typeof s.auth === "string" ? credentials[s.auth]! : s.auth;
  const body = s.body === undefined ? undefined : typeof s.body === "string" ? s.body : JSON.stringify(s.body);
  return call(`${w.sb.urls.base}${s.path}`, { method: s.method, headers: { ...auth, ...s.headers }, ...(body === undefined ? {} : { body }) });
}

/** Asymmetric matchers, typed (vitest's are `any`). */
export const anyString: unknown = expect.any(String);
export const anyNumber: unknown = expect.any(Number);
export const matching = (pattern: RegExp): unknown => expect.stringMatching(pattern);
