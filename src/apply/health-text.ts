/**
 * A failed post-apply check as a person reads it, the one form every place that shows one uses
 * (the run's row, /status, the status page, `gatesync history`, notifications, the run's span,
 * a promotion's refusal): which resource and check, the status expected against the one got,
 * why the checks could not run, and a bounded excerpt of the answer. The excerpt is a server's
 * answer: control characters out, cut to a bound, and scrubbed by the one redaction layer
 * before it is kept anywhere.
 */
import { boundText } from "../text/bounded-text.js";
import type { HealthResult } from "../kinds/kind.js";
import { scrubText } from "../secrets/redaction.js";

/** Characters of an answer a health keeps. */
export const maxExcerptChars = 300;

/** An answer's body as a health keeps it: JSON or text, bounded and scrubbed. */
export function answerExcerpt(body: unknown): string | undefined {
  if (body === undefined || body === null || body === "") return undefined;
  let text: string;
  try {
    text = typeof body === "string" ? body : (JSON.stringify(body) ?? "");
  } catch {
    return undefined;
  }
  // scrubbed whole first: a secret cut in two by the bound would no longer be recognised
  return text === "" ? undefined : boundText(scrubText(text), maxExcerptChars);
}

/** `GET pets: expected 200, got 502` for each failed check (`got no answer` for status 0). */
export function failedChecksOf(health: HealthResult): string[] {
  return health.checks.filter((c) => !c.ok).map((c) => `${c.method} ${c.path}: expected ${c.expected}, got ${c.status === 0 ? "no answer" : c.status}`);
}

/** One line: `ApiDefinition/petstore: GET pets: expected 200, got no answer — the batch route … answered 502 …; answer: {…}`. */
export function describeHealth(health: HealthResult): string {
  const checks = failedChecksOf(health);
  const parts = [checks.length === 0 ? "checks failed" : checks.join("; ")];
  if (health.error !== undefined) parts.push(health.error);
  const text = `${health.id}: ${parts.join(" — ")}${health.excerpt === undefined ? "" : `; answer: ${health.excerpt}`}`;
  return scrubText(text);
}

/** The failed checks of a run's health results, each as `describeHealth` says it. */
export const checkFailuresOf = (health: readonly HealthResult[]): string[] => health.filter((h) => !h.ok).map(describeHealth);
