/**
 * Label selectors, as in Kubernetes: `team=storefront`, `tier!=internal`, `team in (a,b)`,
 * `tier notin (internal,legacy)`, `canary` (the label exists), `!canary` (it does not).
 * Requirements are separated by commas (outside parentheses) and must all hold.
 */
import { UsageError } from "./errors.js";

export type Requirement =
  | { readonly key: string; readonly op: "=" | "!="; readonly value: string }
  | { readonly key: string; readonly op: "in" | "notin"; readonly values: readonly string[] }
  | { readonly key: string; readonly op: "exists" | "!exists" };

export interface Selector {
  /** The expression as written. */
  readonly text: string;
  readonly requirements: readonly Requirement[];
}

// label keys and values: Kubernetes' character set, plus a key's optional `prefix/`
const keyPattern = /^([a-z0-9]([-a-z0-9.]*[a-z0-9])?\/)?[A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?$/;
const valuePattern = /^([A-Za-z0-9]([-A-Za-z0-9_.]*[A-Za-z0-9])?)?$/;

const hint = "write requirements like team=storefront, tier!=internal, team in (a,b), tier notin (x), canary or !canary, separated by commas";

function splitTopLevel(text: string): string[] {
  const parts: string[] = [];
  let depth = 0;
  let current = "";
  for (const ch of text) {
    if (ch === "(") depth++;
    if (ch === ")") depth--;
    if (depth < 0) throw new UsageError(`label selector ${JSON.stringify(text)}: a \`)\` without \`(\``, hint);
    if (ch === "," && depth === 0) {
      parts.push(current);
      current = "";
    } else current += ch;
  }
  if (depth !== 0) throw new UsageError(`label selector ${JSON.stringify(text)}: a \`(\` is not closed`, hint);
  parts.push(current);
  return parts.map((p) => p.trim());
}

function checkKey(key: string, whole: string): string {
  if (!keyPattern.test(key) || key.length > 316)
    throw new UsageError(`label selector ${JSON.stringify(whole)}: ${JSON.stringify(key)} is not a label key`, hint);
  return key;
}

function checkValue(value: string, whole: string): string {
  if (!valuePattern.test(value) || value.length > 63)
    throw new UsageError(`label selector ${JSON.stringify(whole)}: ${JSON.stringify(value)} is not a label value`, hint);
  return value;
}

function parseRequirement(part: string, whole: string): Requirement {
  if (part === "") throw new UsageError(`label selector ${JSON.stringify(whole)}: an empty requirement`, hint);
  const set = /^(\S+)\s+(in|notin)\s*\((.*)\)$/.exec(part);
  if (set !== null) {
    const values = set[3]!.split(",").map((v) => checkValue(v.trim(), whole));
    if (values.length === 0 || (values.length === 1 && values[0] === ""))
      throw new UsageError(`label selector ${JSON.stringify(whole)}: \`${set[2]!}\` needs at least one value`, hint);
    return { key: checkKey(set[1]!, whole), op: set[2] as "in" | "notin", values };
  }
  const cmp = /^([^=!\s]+)\s*(==|=|!=)\s*(.*)$/.exec(part);
  if (cmp !== null) return { key: checkKey(cmp[1]!, whole), op: cmp[2] === "!=" ? "!=" : "=", value: checkValue(cmp[3]!, whole) };
  if (part.startsWith("!")) return { key: checkKey(part.slice(1).trim(), whole), op: "!exists" };
  return { key: checkKey(part, whole), op: "exists" };
}

/** Parses a selector; a malformed one is a USAGE error naming the part that is wrong. */
export function parseSelector(text: string): Selector {
  const trimmed = text.trim();
  if (trimmed === "") throw new UsageError("the label selector is empty", hint);
  return { text: trimmed, requirements: splitTopLevel(trimmed).map((p) => parseRequirement(p, trimmed)) };
}

/** Whether labels satisfy every requirement (`!=` and `notin` hold when the label is absent, as in Kubernetes). */
export function matchesSelector(selector: Selector, labels: Readonly<Record<string, string>>): boolean {
  return selector.requirements.every((r) => {
    const has = Object.prototype.hasOwnProperty.call(labels, r.key);
    const value = has ? labels[r.key] : undefined;
    switch (r.op) {
      case "=":
        return value === r.value;
      case "!=":
        return value !== r.value;
      case "in":
        return value !== undefined && r.values.includes(value);
      case "notin":
        return value === undefined || !r.values.includes(value);
      case "exists":
        return has;
      case "!exists":
        return !has;
    }
  });
}
